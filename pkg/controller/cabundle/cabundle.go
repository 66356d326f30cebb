// Package cabundle copies the storage initializer's CA bundle into the
// namespaces whose pods mount it, as KServe does: the ConfigMap that
// serval-config's storageInitializer.caBundleConfigMapName names, in
// Serval's namespace, becomes global-ca-bundle in each served namespace.
package cabundle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apply"
	"github.com/serval-dev/serval/pkg/storage"
)

// RBAC for the copies (controller-gen reads this free-standing marker).
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=create;patch

// ManagedByLabel marks the copies as Serval's.
const ManagedByLabel = "app.kubernetes.io/managed-by"

// recheck is how long a copy is trusted before it is applied again: a
// copy deleted by hand comes back within it.
const recheck = 10 * time.Minute

// Problem is a CA bundle that cannot be copied as configured: its
// ConfigMap, or its cabundle.crt, is missing.
type Problem struct{ Message string }

func (p *Problem) Error() string { return p.Message }

// Copier copies the bundle. One serves every reconcile.
type Copier struct {
	// Client reads the source from the cache (Serval's namespace is
	// cached) and writes the copies.
	Client client.Client
	// Namespace is Serval's namespace, where the source is.
	Namespace string
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu     sync.Mutex
	copies map[string]copied
}

type copied struct {
	hash string
	at   time.Time
}

// Ensure makes global-ca-bundle in namespace a copy of source's
// cabundle.crt. It writes only when the bundle changed or the copy is
// older than recheck. A missing source or key is a *Problem.
func (c *Copier) Ensure(ctx context.Context, namespace, source string) error {
	src := &corev1.ConfigMap{}
	err := c.Client.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: source}, src)
	if apierrors.IsNotFound(err) {
		return &Problem{fmt.Sprintf("serval-config storageInitializer.caBundleConfigMapName names the ConfigMap %s/%s, which does not exist; create it with the bundle under %s",
			c.Namespace, source, storage.CABundleFile)}
	}
	if err != nil {
		return fmt.Errorf("read the CA bundle %s/%s: %w", c.Namespace, source, err)
	}
	bundle := src.Data[storage.CABundleFile]
	if bundle == "" {
		return &Problem{fmt.Sprintf("the CA bundle ConfigMap %s/%s has no %s", c.Namespace, source, storage.CABundleFile)}
	}
	sum := sha256.Sum256([]byte(bundle))
	hash := hex.EncodeToString(sum[:8])
	now := c.now()
	c.mu.Lock()
	last, ok := c.copies[namespace]
	c.mu.Unlock()
	if ok && last.hash == hash && now.Sub(last.at) < recheck {
		return nil
	}
	cm := corev1ac.ConfigMap(storage.GlobalCABundleConfigMap, namespace).
		WithLabels(map[string]string{ManagedByLabel: "serval"}).
		WithData(map[string]string{storage.CABundleFile: bundle})
	if err := c.Client.Apply(ctx, cm, client.FieldOwner(apply.FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("copy the CA bundle into %s: %w", namespace, err)
	}
	c.mu.Lock()
	if c.copies == nil {
		c.copies = map[string]copied{}
	}
	c.copies[namespace] = copied{hash: hash, at: now}
	c.mu.Unlock()
	return nil
}

func (c *Copier) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
