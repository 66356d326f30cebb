package clustertest

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// namespaceOnly matches the one namespace of a test, so that a policy or a
// webhook it installs never touches the others.
func namespaceOnly(ns string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
}

var deploymentWrites = []admissionregistrationv1.RuleWithOperations{{
	Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
	Rule:       admissionregistrationv1.Rule{APIGroups: []string{"apps"}, APIVersions: []string{"v1"}, Resources: []string{"deployments"}},
}}

// assertBackoff checks that a failing InferenceService is retried with a
// growing delay: at most max reconciles over d (a hot loop makes hundreds),
// and at least one (the failure is retried, not dropped).
func assertBackoff(t *testing.T, ns, name string, d time.Duration, max int) {
	t.Helper()
	before := reconciled.of(ns, name)
	noReconcileStorm(t, ns, name, d, max)
	assert.Greater(t, reconciled.of(ns, name), before, "the failure is retried")
}

// TestForbiddenWriteIsACondition: a write the cluster forbids (here an
// admission policy; RBAC gives the same status) turns into the component's
// condition with the API server's message and an Event, is retried with
// backoff, and goes through once the policy is gone.
func TestForbiddenWriteIsACondition(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "no-deployments-" + ns},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: deploymentWrites[0]}}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: "false",
				Message:    "Deployments are frozen in this namespace",
				Reason:     ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: policy.Name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        policy.Name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources:    &admissionregistrationv1.MatchResources{NamespaceSelector: namespaceOnly(ns)},
		},
	}
	require.NoError(t, k8s.Create(ctx, policy))
	require.NoError(t, k8s.Create(ctx, binding))
	t.Cleanup(func() { _ = k8s.Delete(ctx, binding); _ = k8s.Delete(ctx, policy) })
	// The policy takes effect once the API server has loaded it: probe with
	// a Deployment of the test's own until one is refused.
	eventually(t, "the policy in force", func() bool {
		return k8s.Create(ctx, probeDeployment(ns), &client.CreateOptions{DryRun: []string{metav1.DryRunAll}}) != nil
	})

	createClusterRuntime(t, "forbidden-sklearn", "sklearn-forbidden")
	createISVC(t, ns, "frozen", "sklearn-forbidden")
	eventually(t, "ApplyForbidden", func() bool {
		return hasCondition(getISVC(t, ns, "frozen"), v1beta1.ConditionPredictorReady, metav1.ConditionFalse, v1beta1.ReasonApplyForbidden)
	})
	isvc := getISVC(t, ns, "frozen")
	assert.Contains(t, cond(isvc, v1beta1.ConditionPredictorReady).Message,
		"the API server refused Deployment "+ns+"/frozen-predictor: ")
	assert.Contains(t, cond(isvc, v1beta1.ConditionPredictorReady).Message, "Deployments are frozen in this namespace")
	assert.True(t, hasCondition(isvc, v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonComponentsNotReady))
	assert.Contains(t, cond(isvc, v1beta1.ConditionReady).Message, "PredictorReady (ApplyForbidden: ")
	eventually(t, "the Event", func() bool { return hasEvent(t, ns, v1beta1.EventNotReady, "Deployments are frozen in this namespace") })
	assertBackoff(t, ns, "frozen", 3*time.Second, 6)

	require.NoError(t, k8s.Delete(ctx, binding))
	eventually(t, "the Deployment once the policy is gone", func() bool { return exists(&appsv1.Deployment{}, ns, "frozen-predictor") })
	makeAvailable(t, ns, "frozen-predictor")
	eventually(t, "Ready", func() bool {
		return hasCondition(getISVC(t, ns, "frozen"), v1beta1.ConditionReady, metav1.ConditionTrue, "")
	})
}

// TestWebhookTimeoutIsACondition: a third-party webhook on Deployments that
// does not answer in time fails the write; the component says so with the
// API server's message and an Event, the write is retried with backoff, and
// goes through once the webhook answers.
func TestWebhookTimeoutIsACondition(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	var answering atomic.Bool
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !answering.Load() {
			select {
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
			return
		}
		allow(w, r)
	}))
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	hook := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "slow-" + ns},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "slow.example.com",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL), CABundle: ca},
			Rules:                   deploymentWrites,
			NamespaceSelector:       namespaceOnly(ns),
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](1),
		}},
	}
	require.NoError(t, k8s.Create(ctx, hook))
	t.Cleanup(func() { _ = k8s.Delete(ctx, hook) })
	eventually(t, "the webhook in force", func() bool {
		return k8s.Create(ctx, probeDeployment(ns), &client.CreateOptions{DryRun: []string{metav1.DryRunAll}}) != nil
	})

	createClusterRuntime(t, "timeout-sklearn", "sklearn-timeout")
	createISVC(t, ns, "slow", "sklearn-timeout")
	eventually(t, "ApplyFailed", func() bool {
		return hasCondition(getISVC(t, ns, "slow"), v1beta1.ConditionPredictorReady, metav1.ConditionFalse, v1beta1.ReasonApplyFailed)
	})
	msg := cond(getISVC(t, ns, "slow"), v1beta1.ConditionPredictorReady).Message
	assert.Contains(t, msg, "Deployment "+ns+"/slow-predictor")
	assert.Contains(t, msg, `failed calling webhook "slow.example.com"`)
	eventually(t, "the Event", func() bool {
		return hasEvent(t, ns, v1beta1.EventNotReady, `failed calling webhook "slow.example.com"`)
	})
	// Each retry waits a second for the webhook, so backoff shows as few
	// reconciles over a longer window.
	assertBackoff(t, ns, "slow", 4*time.Second, 4)

	answering.Store(true)
	eventually(t, "the Deployment once the webhook answers", func() bool { return exists(&appsv1.Deployment{}, ns, "slow-predictor") })
	makeAvailable(t, ns, "slow-predictor")
	eventually(t, "Ready", func() bool {
		return hasCondition(getISVC(t, ns, "slow"), v1beta1.ConditionReady, metav1.ConditionTrue, "")
	})
}

// probeDeployment is a Deployment of the test's own, created as a dry run to
// tell when an admission policy or webhook is in force.
func probeDeployment(ns string) *appsv1.Deployment {
	labels := map[string]string{"app": "probe"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/probe:1"}}},
			},
		},
	}
}

// allow answers an AdmissionReview with allowed: true.
func allow(w http.ResponseWriter, r *http.Request) {
	review := &admissionv1.AdmissionReview{}
	if err := json.NewDecoder(r.Body).Decode(review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

// TestPodsThatCannotBeCreated: a Deployment whose controller cannot create
// pods (a quota here) makes PredictorReady say so, with its message.
func TestPodsThatCannotBeCreated(t *testing.T) {
	ns := newNamespace(t)
	createClusterRuntime(t, "quota-sklearn", "sklearn-quota")
	createISVC(t, ns, "quota", "sklearn-quota")
	eventually(t, "the Deployment", func() bool { return exists(&appsv1.Deployment{}, ns, "quota-predictor") })
	const refused = `pods "quota-predictor-7d9f" is forbidden: exceeded quota: compute, requested: cpu=1, used: cpu=2, limited: cpu=2`
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		dep, err := getDeployment(ns, "quota-predictor")
		if err != nil {
			return err
		}
		dep.Status = appsv1.DeploymentStatus{ObservedGeneration: dep.Generation, Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable"},
			{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: refused}}}
		return k8s.Status().Update(context.Background(), dep)
	}))
	eventually(t, "PredictorReady names the quota", func() bool {
		c := cond(getISVC(t, ns, "quota"), v1beta1.ConditionPredictorReady)
		return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, refused)
	})
	assert.Contains(t, cond(getISVC(t, ns, "quota"), v1beta1.ConditionLatestDeploymentReady).Message, "cannot create its pods (FailedCreate)")
}
