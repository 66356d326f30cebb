package webhook

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/components"
	"github.com/serval-dev/serval/pkg/controller/localmodel"
	"github.com/serval-dev/serval/pkg/controller/localmodel/cacheobjects"
	"github.com/serval-dev/serval/pkg/storage"
)

// +kubebuilder:webhook:path=/validate-serving-serval-dev-v1alpha1-localmodelcache,mutating=false,failurePolicy=fail,sideEffects=None,groups=serving.serval.dev,resources=localmodelcaches,verbs=create;update;delete,versions=v1alpha1,name=localmodelcache.validate.serving.serval.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-serving-serval-dev-v1alpha1-localmodelnamespacecache,mutating=false,failurePolicy=fail,sideEffects=None,groups=serving.serval.dev,resources=localmodelnamespacecaches,verbs=create;update;delete,versions=v1alpha1,name=localmodelnamespacecache.validate.serving.serval.dev,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-serving-serval-dev-v1alpha1-localmodelnodegroup,mutating=false,failurePolicy=fail,sideEffects=None,groups=serving.serval.dev,resources=localmodelnodegroups,verbs=create;update;delete,versions=v1alpha1,name=localmodelnodegroup.validate.serving.serval.dev,admissionReviewVersions=v1

// LocalModelCache validates cluster caches, LocalModelNamespaceCache
// namespace caches, LocalModelNodeGroup node groups. The caches and groups
// are read from the API server, not the cache: two caches applied one
// after the other must both count against a group's limit. Services are
// read from the cache (they are many, and a cache is deleted rarely).
type (
	LocalModelCache          struct{ Caches localModelCaches }
	LocalModelNamespaceCache struct{ Caches localModelCaches }
	LocalModelNodeGroup      struct{ Caches localModelCaches }
)

// localModelCaches reads what the cache rules need.
type localModelCaches struct {
	// Reader reads caches and groups (uncached); Services reads services.
	Reader, Services client.Reader
}

var (
	_ admission.Validator[*v1alpha1.LocalModelCache]          = LocalModelCache{}
	_ admission.Validator[*v1alpha1.LocalModelNamespaceCache] = LocalModelNamespaceCache{}
	_ admission.Validator[*v1alpha1.LocalModelNodeGroup]      = LocalModelNodeGroup{}
)

// ValidateCreate implements admission.Validator.
func (w LocalModelCache) ValidateCreate(ctx context.Context, c *v1alpha1.LocalModelCache) (admission.Warnings, error) {
	return w.Caches.validate(ctx, c, nil)
}

// ValidateUpdate implements admission.Validator.
func (w LocalModelCache) ValidateUpdate(ctx context.Context, old, c *v1alpha1.LocalModelCache) (admission.Warnings, error) {
	return w.Caches.validate(ctx, c, &old.Spec)
}

// ValidateDelete implements admission.Validator: a cache a service mounts
// is not deleted under it (KServe's rule).
func (w LocalModelCache) ValidateDelete(ctx context.Context, c *v1alpha1.LocalModelCache) (admission.Warnings, error) {
	return nil, w.Caches.refuseInUse(ctx, c)
}

// ValidateCreate implements admission.Validator.
func (w LocalModelNamespaceCache) ValidateCreate(ctx context.Context, c *v1alpha1.LocalModelNamespaceCache) (admission.Warnings, error) {
	return w.Caches.validate(ctx, c, nil)
}

// ValidateUpdate implements admission.Validator.
func (w LocalModelNamespaceCache) ValidateUpdate(ctx context.Context, old, c *v1alpha1.LocalModelNamespaceCache) (admission.Warnings, error) {
	return w.Caches.validate(ctx, c, &old.Spec.LocalModelCacheSpec)
}

// ValidateDelete implements admission.Validator.
func (w LocalModelNamespaceCache) ValidateDelete(ctx context.Context, c *v1alpha1.LocalModelNamespaceCache) (admission.Warnings, error) {
	return nil, w.Caches.refuseInUse(ctx, c)
}

func kindOf(c v1alpha1.ModelCache) schema.GroupKind {
	return v1alpha1.GroupVersion.WithKind(v1alpha1.CacheKindOf(c.GetNamespace())).GroupKind()
}

// validate checks a cache: a URI a download Job can fetch, a positive
// size, a URI no other cluster cache has (KServe's rule), and room on each
// of its groups, the other caches' models counted. A group that does not
// exist refuses a namespace cache (KServe's rule) and warns for a cluster
// cache, which KServe admits (a group applied after its caches then checks
// the room). An update that changes neither the size nor the groups is not
// refused for the room (a group's limit may have been lowered since).
func (l localModelCaches) validate(ctx context.Context, c v1alpha1.ModelCache, old *v1alpha1.LocalModelCacheSpec) (admission.Warnings, error) {
	if c.GetDeletionTimestamp() != nil {
		return nil, nil
	}
	spec := c.CacheSpec()
	if old != nil && apiequality.Semantic.DeepEqual(*old, *spec) {
		return nil, nil
	}
	var warnings admission.Warnings
	var errs field.ErrorList
	path := field.NewPath("spec")
	if msg, err := l.checkURI(ctx, spec.SourceModelUri); err != nil {
		return nil, err
	} else if msg != "" {
		errs = append(errs, field.Invalid(path.Child("sourceModelUri"), spec.SourceModelUri, msg))
	}
	if spec.ModelSize.Sign() <= 0 {
		errs = append(errs, field.Invalid(path.Child("modelSize"), spec.ModelSize.String(), "must be more than 0"))
	}
	caches, err := localmodel.ListCaches(ctx, l.Reader)
	if err != nil {
		return nil, err
	}
	self := v1alpha1.StatusKey(c.GetNamespace(), c.GetName())
	if c.GetNamespace() == "" {
		for _, other := range caches.Cluster {
			if other.Name != c.GetName() && other.Spec.SourceModelUri == spec.SourceModelUri {
				errs = append(errs, field.Duplicate(path.Child("sourceModelUri"),
					fmt.Sprintf("%s: LocalModelCache %s already caches it", spec.SourceModelUri, other.Name)))
			}
		}
	}
	roomChanged := old == nil || !old.ModelSize.Equal(spec.ModelSize) || !slices.Equal(old.NodeGroups, spec.NodeGroups)
	for i, name := range spec.NodeGroups {
		g := &v1alpha1.LocalModelNodeGroup{}
		err := l.Reader.Get(ctx, client.ObjectKey{Name: name}, g)
		switch {
		case apierrors.IsNotFound(err) && c.GetNamespace() == "":
			warnings = append(warnings, fmt.Sprintf("spec.nodeGroups[%d]: no LocalModelNodeGroup named %s yet: the cache waits for it (NodeGroupNotFound)", i, name))
			continue
		case apierrors.IsNotFound(err):
			errs = append(errs, field.NotFound(path.Child("nodeGroups").Index(i), name))
			continue
		case err != nil:
			return nil, err
		}
		if !roomChanged {
			continue
		}
		if msg := localmodel.CheckRoom(g, c.GetNamespace(), spec.SourceModelUri, spec.ModelSize, caches.All(), self); msg != "" {
			errs = append(errs, field.Invalid(path.Child("modelSize"), spec.ModelSize.String(), msg))
		}
	}
	if len(errs) == 0 {
		return warnings, nil
	}
	return warnings, apierrors.NewInvalid(kindOf(c), c.GetName(), errs)
}

// checkURI says why a download Job cannot fetch uri, or "": it must be a
// scheme the storage initializer downloads, or one a ClusterStorageContainer
// for download Jobs supports.
func (l localModelCaches) checkURI(ctx context.Context, uri string) (string, error) {
	scs := &v1alpha1.ClusterStorageContainerList{}
	if err := l.Reader.List(ctx, scs); err != nil {
		return "", err
	}
	custom := false
	for i := range scs.Items {
		sc := &scs.Items[i]
		if sc.IsDisabled() || sc.Spec.WorkloadType != v1alpha1.LocalModelDownloadJob {
			continue
		}
		if ok, _ := sc.Spec.Supports(uri); ok {
			custom = true
		}
	}
	loc, err := storage.ParseWith(uri, custom)
	switch {
	case err != nil:
		return err.Error(), nil
	case loc.Kind == storage.PVC:
		return "a pvc:// model is on a claim already; mount it directly", nil
	case loc.Kind == storage.OCI:
		return "an oci:// model is an image, which each node's container runtime caches already; use oci+fetch:// to cache its files", nil
	}
	return "", nil
}

// refuseInUse refuses to delete a cache that services mount, naming them.
func (l localModelCaches) refuseInUse(ctx context.Context, c v1alpha1.ModelCache) error {
	users, err := l.users(ctx, c)
	if err != nil || len(users) == 0 {
		return err
	}
	shown := users
	if len(shown) > 10 {
		shown = shown[:10]
	}
	msg := fmt.Sprintf("%s %s is in use by %s", v1alpha1.CacheKindOf(c.GetNamespace()), c.GetName(), strings.Join(shown, ", "))
	if n := len(users) - len(shown); n > 0 {
		msg += fmt.Sprintf(" and %d more", n)
	}
	msg += fmt.Sprintf("; delete them, or give them the %s annotation, first", v1alpha1.DisableLocalModelAnnotation)
	return apierrors.NewForbidden(v1alpha1.GroupVersion.WithResource(strings.ToLower(v1alpha1.CacheKindOf(c.GetNamespace()))+"s").GroupResource(), c.GetName(), fmt.Errorf("%s", msg))
}

// users are the services that mount a cache, by the choice their own
// reconciles make.
func (l localModelCaches) users(ctx context.Context, c v1alpha1.ModelCache) ([]string, error) {
	caches, err := localmodel.ListCaches(ctx, l.Reader)
	if err != nil {
		return nil, err
	}
	var opts []client.ListOption
	if ns := c.GetNamespace(); ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	var out []string
	uses := func(kind, ns, name, uri string, annotations map[string]string) {
		if u := caches.Choose(uri, ns, annotations); u != nil && u.Cache.GetUID() == c.GetUID() {
			out = append(out, fmt.Sprintf("%s %s/%s", kind, ns, name))
		}
	}
	isvcs := &v1beta1.InferenceServiceList{}
	if err := l.Services.List(ctx, isvcs, opts...); err != nil {
		return nil, err
	}
	for i := range isvcs.Items {
		s := &isvcs.Items[i]
		uses("InferenceService", s.Namespace, s.Name, components.StorageURIOf(s), s.Annotations)
	}
	llms := &v1alpha2.LLMInferenceServiceList{}
	if err := l.Services.List(ctx, llms, opts...); err != nil {
		return nil, err
	}
	for i := range llms.Items {
		s := &llms.Items[i]
		uses("LLMInferenceService", s.Namespace, s.Name, s.Spec.Model.URI, s.Annotations)
	}
	slices.Sort(out)
	return out, nil
}

// ValidateCreate implements admission.Validator.
func (w LocalModelNodeGroup) ValidateCreate(ctx context.Context, g *v1alpha1.LocalModelNodeGroup) (admission.Warnings, error) {
	return nil, w.validate(ctx, g, nil)
}

// ValidateUpdate implements admission.Validator.
func (w LocalModelNodeGroup) ValidateUpdate(ctx context.Context, old, g *v1alpha1.LocalModelNodeGroup) (admission.Warnings, error) {
	if g.DeletionTimestamp != nil || apiequality.Semantic.DeepEqual(old.Spec, g.Spec) {
		return nil, nil
	}
	return nil, w.validate(ctx, g, old)
}

// ValidateDelete implements admission.Validator: a group caches name is
// not deleted under them.
func (w LocalModelNodeGroup) ValidateDelete(ctx context.Context, g *v1alpha1.LocalModelNodeGroup) (admission.Warnings, error) {
	caches, err := localmodel.ListCaches(ctx, w.Caches.Reader)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, c := range caches.All() {
		if slices.Contains(c.CacheSpec().NodeGroups, g.Name) {
			names = append(names, v1alpha1.CacheKindOf(c.GetNamespace())+" "+v1alpha1.StatusKey(c.GetNamespace(), c.GetName()))
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	return nil, apierrors.NewForbidden(v1alpha1.GroupVersion.WithResource("localmodelnodegroups").GroupResource(), g.Name,
		fmt.Errorf("node group %s is used by %s; take it off their nodeGroups first", g.Name, strings.Join(names, ", ")))
}

// groupRules are a group's rules that need nothing of the cluster.
func groupRules(g *v1alpha1.LocalModelNodeGroup) field.ErrorList {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	if p := cacheobjects.HostPathOf(g); p == "" {
		errs = append(errs, field.Invalid(spec.Child("persistentVolumeSpec"), "", "must be a hostPath or local volume: the node agent keeps the models on each node's disk"))
	} else if why := groupPathProblem(p); why != "" {
		errs = append(errs, field.Invalid(spec.Child("persistentVolumeSpec", hostPathField(g), "path"), p, why))
	}
	if localmodel.Selector(g) == nil {
		errs = append(errs, field.Required(spec.Child("persistentVolumeSpec", "nodeAffinity", "required"), "it selects the group's nodes"))
	}
	if g.Spec.StorageLimit.Sign() <= 0 {
		errs = append(errs, field.Invalid(spec.Child("storageLimit"), g.Spec.StorageLimit.String(), "must be more than 0"))
	}
	return errs
}

// groupPathProblem says why a node group's path cannot hold models, or "":
// it is written by download Jobs and read by the agent on every node of the
// group, so it is a folder of its own, never the node's root or a system
// directory (where a download would write over the node itself).
func groupPathProblem(p string) string {
	switch {
	case !path.IsAbs(p) || path.Clean(p) != p:
		return "must be an absolute path, without \"..\" or a trailing \"/\""
	case p == "/":
		return "must not be the node's root: the models need a folder of their own"
	case storage.SystemDirOf(p) != "":
		return "must not be at or under " + storage.SystemDirOf(p) + ", a system directory of the node"
	}
	return ""
}

// hostPathField is the name of the group's volume source field.
func hostPathField(g *v1alpha1.LocalModelNodeGroup) string {
	if g.Spec.PersistentVolumeSpec.HostPath != nil {
		return "hostPath"
	}
	return "local"
}

// validate checks a group: a hostPath or local volume (the node agent reads
// the models on each node's disk), a positive limit, and a limit at least
// what the caches that name it take (on update, when it is lowered; on
// create, for caches applied before it).
func (w LocalModelNodeGroup) validate(ctx context.Context, g *v1alpha1.LocalModelNodeGroup, old *v1alpha1.LocalModelNodeGroup) error {
	errs := groupRules(g)
	spec := field.NewPath("spec")
	if old == nil || g.Spec.StorageLimit.Cmp(old.Spec.StorageLimit) < 0 {
		caches, err := localmodel.ListCaches(ctx, w.Caches.Reader)
		if err != nil {
			return err
		}
		u := localmodel.UsageOf(g.Name, caches.All(), "")
		if u.Used.Cmp(g.Spec.StorageLimit) > 0 {
			errs = append(errs, field.Invalid(spec.Child("storageLimit"), g.Spec.StorageLimit.String(),
				fmt.Sprintf("its caches take %s (%s)", u.Used.String(), strings.Join(u.Parts, ", "))))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(v1alpha1.GroupVersion.WithKind("LocalModelNodeGroup").GroupKind(), g.Name, errs)
}
