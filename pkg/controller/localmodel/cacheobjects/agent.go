package cacheobjects

import (
	"fmt"
	"path"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/modelcache"
)

// The node agent's names.
const (
	// AgentBinary is the agent's path in the manager's image.
	AgentBinary = "/serval-node-agent"
	// AgentServiceAccount is the account its pods run as, which the chart
	// creates with the agent's rights.
	AgentServiceAccount = "serval-node-agent"
	// AgentModelsRoot is where the agent sees its group's disk.
	AgentModelsRoot = "/mnt/models"
	agentVolume     = "models"
)

// AgentName is the DaemonSet of a group's agent.
func AgentName(group string) string { return "serval-node-agent-" + group }

// HostPathOf is the path on each node of a group's disk: its volume
// template's hostPath or local path; "" for another kind of volume
// (admission refuses it).
func HostPathOf(g *v1alpha1.LocalModelNodeGroup) string {
	switch s := g.Spec.PersistentVolumeSpec; {
	case s.HostPath != nil:
		return s.HostPath.Path
	case s.Local != nil:
		return s.Local.Path
	}
	return ""
}

// AgentInputs are what a group's agent is made of.
type AgentInputs struct {
	Group *v1alpha1.LocalModelNodeGroup
	// Namespace is the manager's, where the agent runs and reads
	// serval-config; Image the agent's image.
	Namespace, Image string
}

// Agent is the DaemonSet of a group's node agent: on the group's nodes
// (its volume template's node affinity), with the group's disk mounted
// from the very path its volumes use, so the agent always sees what the
// downloads wrote (KServe's agent has its own host path setting, and a
// mismatch made it download again and again).
func Agent(in AgentInputs) (apply.Object, error) {
	g := in.Group
	hostPath := HostPathOf(g)
	if hostPath == "" {
		return apply.Object{}, fmt.Errorf("node group %s: its persistentVolumeSpec is neither a hostPath nor a local volume, so no agent can see its disk", g.Name)
	}
	labels := map[string]string{v1beta1.ComponentLabel: modelcache.Component, modelcache.NodeGroupLabel: g.Name, "app.kubernetes.io/name": "serval-node-agent"}
	selector := map[string]string{modelcache.NodeGroupLabel: g.Name, "app.kubernetes.io/name": "serval-node-agent"}
	affinity := &corev1ac.NodeAffinityApplyConfiguration{}
	if err := convert(&corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: g.Spec.PersistentVolumeSpec.NodeAffinity.Required}, affinity); err != nil {
		return apply.Object{}, err
	}
	container := corev1ac.Container().
		WithName("agent").WithImage(in.Image).WithCommand(AgentBinary).
		WithArgs("--group="+g.Name, "--namespace="+in.Namespace, "--models-root="+AgentModelsRoot).
		WithEnv(corev1ac.EnvVar().WithName("NODE_NAME").WithValueFrom(corev1ac.EnvVarSource().WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath("spec.nodeName")))).
		WithVolumeMounts(corev1ac.VolumeMount().WithName(agentVolume).WithMountPath(path.Join(AgentModelsRoot, v1alpha1.ModelsFolder))).
		WithResources(corev1ac.ResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")}).
			WithLimits(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("256Mi")})).
		WithSecurityContext(corev1ac.SecurityContext().WithAllowPrivilegeEscalation(false).WithReadOnlyRootFilesystem(true).
			WithCapabilities(corev1ac.Capabilities().WithDrop("ALL")))
	ds := appsv1ac.DaemonSet(AgentName(g.Name), in.Namespace).
		WithLabels(labels).
		WithOwnerReferences(GroupRef(g).Reference()).
		WithSpec(appsv1ac.DaemonSetSpec().
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(selector)).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().
				WithServiceAccountName(AgentServiceAccount).
				WithAffinity(corev1ac.Affinity().WithNodeAffinity(affinity)).
				WithTolerations(corev1ac.Toleration().WithOperator(corev1.TolerationOpExists)).
				WithSecurityContext(corev1ac.PodSecurityContext().WithRunAsUser(1000).WithRunAsGroup(1000).WithRunAsNonRoot(true)).
				WithContainers(container).
				// Only the group's models folder: the agent works in nothing
				// else of the node's disk (and measures its space there).
				WithVolumes(corev1ac.Volume().WithName(agentVolume).WithHostPath(corev1ac.HostPathVolumeSource().
					WithPath(path.Join(hostPath, v1alpha1.ModelsFolder)).WithType(corev1.HostPathDirectoryOrCreate))))))
	return apply.Object{GVK: appsv1.SchemeGroupVersion.WithKind("DaemonSet"), Key: types.NamespacedName{Namespace: in.Namespace, Name: AgentName(g.Name)}, Spec: ds}, nil
}
