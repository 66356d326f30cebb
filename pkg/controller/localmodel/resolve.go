package localmodel

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/controller/components"
)

// Waiting is a cache a service uses that cannot serve yet, and why.
type Waiting struct {
	Reason, Message string
}

// Resolve is the cached copy a service of namespace, with storage URI uri
// and these annotations, mounts (KServe's choice, see Choose), resolved at
// every reconcile so a service moves onto a cache created after it and
// off one deleted. nil, nil when it uses none; a Waiting when its cache's
// copies are not all there yet: no pod would find the whole model.
func Resolve(ctx context.Context, r client.Reader, uri, namespace string, annotations map[string]string) (*components.ModelCache, *Waiting, error) {
	if uri == "" {
		return nil, nil, nil
	}
	caches, err := ListCachesFor(ctx, r, namespace)
	if err != nil {
		return nil, nil, fmt.Errorf("list the model caches: %w", err)
	}
	use := caches.Choose(uri, namespace, annotations)
	if use == nil {
		return nil, nil, nil
	}
	if ok, reason, message := CacheReady(use.Cache); !ok {
		return nil, &Waiting{Reason: reason, Message: message}, nil
	}
	mc := &components.ModelCache{
		Ref:    v1beta1.ModelCacheRef{Kind: use.Kind(), Name: use.Cache.GetName(), Namespace: use.Cache.GetNamespace(), NodeGroup: use.Group},
		Source: uri, URI: use.URI,
	}
	if use.Group == "" {
		return mc, nil, nil // one copy on a claim, for any node
	}
	g := &v1alpha1.LocalModelNodeGroup{}
	err = r.Get(ctx, types.NamespacedName{Name: use.Group}, g)
	switch {
	case apierrors.IsNotFound(err):
		return nil, &Waiting{Reason: "ModelCache" + ReasonNodeGroupNotFound, Message: fmt.Sprintf("%s %s: no LocalModelNodeGroup named %s",
			use.Kind(), use.Cache.GetName(), use.Group)}, nil
	case err != nil:
		return nil, nil, fmt.Errorf("read the node group %s: %w", use.Group, err)
	}
	mc.Affinity = NodeAffinity(g)
	return mc, nil, nil
}
