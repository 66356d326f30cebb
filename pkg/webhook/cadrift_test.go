package webhook_test

import (
	"context"
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
	time.Sleep(2 * time.Second) // creates go on after the repair
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
