package storage

import (
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Entry is one model of storageUris: where it is, where it appears.
type Entry struct {
	Location  Location
	MountPath string
}

// systemDirs are the directories of a container's own image and of the
// kernel's interfaces: a model mounted at or under one would hide what
// the model server needs to start (its libraries, its /etc) or shadow what
// the kubelet mounts there.
var systemDirs = []string{"/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc", "/sys", "/dev", "/var/run"}

// SystemDirOf returns the system directory p is at or under, or "": the
// directories of an image and of the kernel's interfaces, where a model
// mounted would hide what a server needs, and where a node's model disk
// would expose the node.
func SystemDirOf(p string) string { return shadowed(p) }

// shadowed returns the system directory p is at or under, or "".
func shadowed(p string) string {
	for _, d := range systemDirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return d
		}
	}
	return ""
}

// DefaultMountPath is a storageUris entry's mount path when it names none
// (KServe's CRD default).
const DefaultMountPath = MountPath

// CheckMountPaths returns the problems of storageUris' mount paths, each
// naming the entry, by KServe's rules: a path is absolute, not /, and
// without "..", and two claims are not mounted at the same path. Models
// that are downloaded may share a path or nest (one volume holds them all,
// as in KServe). Serval adds one rule: a path at or under a system
// directory (/usr, /etc, /proc...) would hide what the server needs.
func CheckMountPaths(entries []Entry) []string {
	var problems []string
	for i, e := range entries {
		p := e.MountPath
		switch {
		case !strings.HasPrefix(p, "/"):
			problems = append(problems, fmt.Sprintf("[%d].mountPath: %q is not an absolute path", i, p))
			continue
		case path.Clean(p) == "/":
			problems = append(problems, fmt.Sprintf("[%d].mountPath: a model cannot be mounted at /", i))
			continue
		case strings.Contains(p, ".."):
			problems = append(problems, fmt.Sprintf("[%d].mountPath: %q holds \"..\", which a mount path may not", i, p))
			continue
		case shadowed(path.Clean(p)) != "":
			problems = append(problems, fmt.Sprintf("[%d].mountPath: %q would hide the container's own %s; mount models in a directory of their own, such as /mnt/models/{name}",
				i, p, shadowed(path.Clean(p))))
			continue
		}
		if e.Location.Kind != PVC {
			continue
		}
		for j := range i {
			if entries[j].Location.Kind == PVC && path.Clean(entries[j].MountPath) == path.Clean(p) {
				problems = append(problems, fmt.Sprintf("[%d].mountPath: %q is where the claim of [%d] is mounted too; each claim needs a path of its own", i, p, j))
			}
		}
	}
	return problems
}

// CommonParent is the deepest directory that holds every path: where the
// models the storage initializer downloads share one volume.
func CommonParent(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	parent := path.Clean(paths[0])
	if len(paths) > 1 {
		parent = path.Dir(parent)
	}
	for _, p := range paths[1:] {
		p = path.Clean(p)
		for parent != "/" && p != parent && !strings.HasPrefix(p, parent+"/") {
			parent = path.Dir(parent)
		}
	}
	return parent
}

// MakeMultiPlan returns the pod changes for storageUris: one storage
// initializer downloads every model not on a claim, each to its path, into
// one volume mounted at the paths' common parent; a claim is mounted at its
// path. OCI images are not taken here (a modelcar or an image volume holds
// one model).
func MakeMultiPlan(entries []Entry, init Initializer, creds Credentials) (Plan, error) {
	if problems := CheckMountPaths(entries); len(problems) > 0 {
		return Plan{}, fmt.Errorf("storageUris%s", strings.Join(problems, "; storageUris"))
	}
	var downloads []string
	var args []string
	plan := Plan{}

	for i, e := range entries {
		switch e.Location.Kind {
		case OCI:
			return Plan{}, fmt.Errorf("storageUris[%d]: %s is an OCI image; storageUris takes gs://, s3://, http(s)://, hf:// and pvc:// URIs (an OCI model goes in storageUri)", i, e.Location.URI)
		case PVC:
			name := fmt.Sprintf("%s-%d", VolumeName, i)
			plan.Volumes = append(plan.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: e.Location.Claim, ReadOnly: true}}})
			plan.ExtraServerMounts = append(plan.ExtraServerMounts,
				corev1.VolumeMount{Name: name, MountPath: path.Clean(e.MountPath), SubPath: e.Location.SubPath, ReadOnly: true})

		default:
			downloads = append(downloads, path.Clean(e.MountPath))
			args = append(args, e.Location.URI, path.Clean(e.MountPath))
		}
	}
	if len(downloads) == 0 {
		// Claims only: the first is the server's mount, the others extra.
		plan.ServerMount, plan.ExtraServerMounts = plan.ExtraServerMounts[0], plan.ExtraServerMounts[1:]
		return plan, nil
	}
	parent := CommonParent(downloads)
	if parent == "/" {
		return Plan{}, fmt.Errorf("the mount paths %s share no parent directory but /; put them under one, such as /mnt/models", strings.Join(downloads, ", "))
	}
	env, volumes, mounts := credentialsFor(creds)
	plan.InitContainer = &corev1.Container{
		Name:                     InitContainerName,
		Image:                    init.Image,
		Args:                     args,
		Resources:                *init.Resources.DeepCopy(),
		Env:                      env,
		VolumeMounts:             append([]corev1.VolumeMount{{Name: VolumeName, MountPath: parent}}, mounts...),
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	}
	volumes = addCABundle(plan.InitContainer, volumes, init.CABundle)
	plan.Volumes = append(append([]corev1.Volume{{Name: VolumeName, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}, volumes...), plan.Volumes...)
	plan.ServerMount = corev1.VolumeMount{Name: VolumeName, MountPath: parent, ReadOnly: true}
	return plan, nil
}
