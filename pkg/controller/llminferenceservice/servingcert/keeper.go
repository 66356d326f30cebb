package servingcert

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Keeper remembers each service's certificate, so that a reconcile renders
// the same Secret as the last one (and the apply step skips it) without
// reading it. It reads a Secret only the first time it meets a service in
// this process, and when the remembered certificate no longer fits.
type Keeper struct {
	// Reader reads Secrets by name; the manager neither caches nor lists them.
	Reader client.Reader
	// Now is the clock; time.Now when nil.
	Now func() time.Time

	mu   sync.Mutex
	kept map[types.NamespacedName]kept
}

type kept struct {
	owner  types.UID
	bundle Bundle
}

// For returns the certificate the Secret key should hold for the owner (a
// service's UID) and the DNS names: the one it holds or was last given when
// that still fits, else a new one. It fails only when the Secret cannot be
// read.
func (k *Keeper) For(ctx context.Context, key types.NamespacedName, owner types.UID, names []string) (Bundle, error) {
	now := k.now()
	k.mu.Lock()
	last, ok := k.kept[key]
	k.mu.Unlock()
	if ok && last.owner == owner && last.bundle.Fits(names, now) {
		return last.bundle, nil
	}
	if !ok {
		live, err := k.read(ctx, key, owner)
		if err != nil {
			return Bundle{}, err
		}
		if live.Fits(names, now) {
			k.keep(key, owner, live)
			return live, nil
		}
	}
	b, err := Issue(names, now)
	if err != nil {
		return Bundle{}, err
	}
	k.keep(key, owner, b)
	return b, nil
}

// Forget drops what is kept for a Secret, when its service is gone.
func (k *Keeper) Forget(key types.NamespacedName) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.kept, key)
}

// read returns the certificate of the live Secret when the owner controls
// it; an empty Bundle when there is none (a Secret of someone else's is not
// reused: the apply step reports it).
func (k *Keeper) read(ctx context.Context, key types.NamespacedName, owner types.UID) (Bundle, error) {
	s := &corev1.Secret{}
	err := k.Reader.Get(ctx, key, s)
	if apierrors.IsNotFound(err) {
		return Bundle{}, nil
	}
	if err != nil {
		return Bundle{}, fmt.Errorf("read the serving certificate %s: %w", key, err)
	}
	if ref := metav1.GetControllerOf(s); ref == nil || ref.UID != owner {
		return Bundle{}, nil
	}
	return Bundle{Key: s.Data[corev1.TLSPrivateKeyKey], Cert: s.Data[corev1.TLSCertKey]}, nil
}

func (k *Keeper) keep(key types.NamespacedName, owner types.UID, b Bundle) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.kept == nil {
		k.kept = map[types.NamespacedName]kept{}
	}
	k.kept[key] = kept{owner: owner, bundle: b}
}

func (k *Keeper) now() time.Time {
	if k.Now == nil {
		return time.Now()
	}
	return k.Now()
}
