package webhook_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	servalwebhook "github.com/serval-dev/serval/pkg/webhook"
)

// TestCABundleDriftIsRepaired: a caBundle reset on the webhook
// configuration (a GitOps tool re-applying the manifests) is put back
// within seconds by the running manager, which watches the configuration,
// while creates go on; once repaired, every create is admitted again.
func TestCABundleDriftIsRepaired(t *testing.T) {
	ctx := context.Background()
	key := types.NamespacedName{Name: servalwebhook.ValidatingConfigName}
	want := secretData(t)["ca.crt"]
	stop := make(chan struct{})
	type attempt struct {
		at  time.Time
		err error
	}
	attempts := make(chan []attempt)
	var made atomic.Int64
	go func() {
		var all []attempt
		for {
			select {
			case <-stop:
				attempts <- all
				return
			default:
			}
			obj := &unstructured.Unstructured{}
			if err := sigsyaml.Unmarshal([]byte(isvcYAML("drift", "", sklearnModel)), &obj.Object); err != nil {
				panic(err)
			}
			all = append(all, attempt{time.Now(), k8s.Create(ctx, obj, client.DryRunAll)})
			made.Add(1)
			time.Sleep(50 * time.Millisecond)
		}
	}()

	cleared := time.Now()
	require.NoError(t, retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := k8s.Get(ctx, key, vwc); err != nil {
			return err
		}
		for i := range vwc.Webhooks {
			vwc.Webhooks[i].ClientConfig.CABundle = nil
		}
		return k8s.Update(ctx, vwc)
	}))
	var repaired time.Duration
	require.Eventually(t, func() bool {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if k8s.Get(ctx, key, vwc) != nil {
			return false
		}
		for _, w := range vwc.Webhooks {
			if string(w.ClientConfig.CABundle) != string(want) {
				return false
			}
		}
		repaired = time.Since(cleared)
		return true
	}, 10*time.Second, 50*time.Millisecond, "the caBundle is repaired within 10 s")
	t.Logf("caBundle repaired %s after it was cleared", repaired.Round(time.Millisecond))
	// Creates go on after the repair: 20 more, once a second has passed.
	require.Eventually(t, func() bool { return time.Since(cleared) > repaired+time.Second }, 5*time.Second, 10*time.Millisecond)
	later := made.Load()
	require.Eventually(t, func() bool { return made.Load() >= later+20 }, 30*time.Second, 10*time.Millisecond)
	close(stop)
	all := <-attempts
	var failed, after int
	for _, a := range all {
		if a.err != nil {
			failed++
		}
		if a.at.After(cleared.Add(repaired + time.Second)) {
			after++
			assert.NoError(t, a.err, "a create a second after the repair is admitted")
		}
	}
	t.Logf("%d creates, %d refused while the caBundle was wrong", len(all), failed)
	assert.Positive(t, after, "creates went on after the repair")
}
