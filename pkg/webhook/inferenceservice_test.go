package webhook_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/internal/testenv"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	servalwebhook "github.com/serval-dev/serval/pkg/webhook"
)

func isvcYAML(name, meta, predictor string) string {
	return "apiVersion: serving.serval.dev/v1beta1\nkind: InferenceService\nmetadata:\n  name: " + name + "\n  namespace: default\n" + meta +
		"spec:\n  predictor:\n" + predictor
}

const sklearnModel = "    model:\n      modelFormat: {name: sklearn}\n      storageUri: gs://models/iris\n"

func create(manifest string) error {
	obj := &unstructured.Unstructured{}
	if err := sigsyaml.Unmarshal([]byte(manifest), &obj.Object); err != nil {
		return err
	}
	return k8s.Create(context.Background(), obj)
}

// TestBadInferenceServicesAreRejected: each bad manifest is rejected at
// admission with its exact message.
func TestBadInferenceServicesAreRejected(t *testing.T) {
	tests := []struct{ name, manifest, want string }{
		{"no implementation", isvcYAML("none", "", "    minReplicas: 1\n"),
			`spec.predictor: Required value: the predictor needs exactly one of model, a framework key (sklearn, onnx, ...) or containers`},
		{"two implementations", isvcYAML("two", "", sklearnModel+"    xgboost: {storageUri: gs://m}\n"),
			`spec.predictor: Invalid value: "model, xgboost": the predictor needs exactly one implementation; found model and xgboost`},
		{"name too long", isvcYAML(strings.Repeat("a", 48), "", sklearnModel),
			`metadata.name: Invalid value: "` + strings.Repeat("a", 48) + `": too long: the predictor's revision name`},
		{"max below min", isvcYAML("order", "", sklearnModel+"    minReplicas: 3\n    maxReplicas: 2\n"),
			`spec.predictor.maxReplicas: Invalid value: 2: must be at least minReplicas (3)`},
		{"logger storage", isvcYAML("logger", "", sklearnModel+"    logger: {mode: all, storage: {path: 's3://logs'}}\n"),
			`spec.predictor.logger.storage: Forbidden: spec.predictor.logger.storage is not supported by Serval yet`},
		{"rps under HPA", isvcYAML("rps", "", sklearnModel+"    scaleMetric: rps\n"),
			`spec.predictor.scaleMetric: Invalid value: "rps": the hpa autoscaler scales on cpu or memory, not rps`},
		{"a canary without a name", isvcYAML("canary", "", sklearnModel+"  canary: [{trafficPercent: 10, predictor: {model: {modelFormat: {name: sklearn}, storageUri: 'gs://models/v2'}}}]\n"),
			`spec.canary[0].predictor.name: Required value: a canary needs a name`},
		{"a canary's storage scheme", isvcYAML("canary-ftp", "", sklearnModel+"  canary: [{trafficPercent: 10, predictor: {name: v2, model: {modelFormat: {name: sklearn}, storageUri: 'ftp://h/m'}}}]\n"),
			`spec.canary[0].predictor.model.storageUri: Invalid value: "ftp://h/m": storageUri scheme "ftp" is not supported`},
		{"a canary's unknown field", isvcYAML("canary-typo", "", sklearnModel+"  canary: [{trafficPercent: 10, predictor: {name: v2, modle: {}}}]\n"),
			`spec.canary[0].predictor.modle: Forbidden: unknown field; check its spelling and indentation`},
		{"canaries over 100", isvcYAML("canary-sum", "", sklearnModel+"  canary: [{trafficPercent: 60, predictor: {name: v2, model: {modelFormat: {name: sklearn}}}}, {trafficPercent: 50, predictor: {name: v3, model: {modelFormat: {name: sklearn}}}}]\n"),
			`spec.canary: Invalid value: 110: the canaries' trafficPercent add up to 110; at most 100`},
		{"keda in Knative mode", isvcYAML("keda", "  annotations: {serving.serval.dev/autoscalerClass: keda, serving.serval.dev/deploymentMode: Knative}\n", sklearnModel),
			`metadata.annotations[serving.serval.dev/autoscalerClass]: Forbidden: autoscalerClass keda scales a Deployment: it needs Standard mode (Knative scales its own)`},
		{"autoScaling without an autoscaler", isvcYAML("autoscaling", "  annotations: {serving.serval.dev/autoscalerClass: none}\n", sklearnModel+"    autoScaling: {metrics: []}\n"),
			`spec.predictor.autoScaling: Forbidden: autoScaling takes effect with autoscalerClass keda or hpa, not none`},
		{"a pod metric under an HPA", isvcYAML("autoscaling-hpa", "", sklearnModel+
			"    autoScaling: {metrics: [{type: PodMetric, podmetric: {metric: {backend: opentelemetry, query: q}, target: {type: Value, value: '2'}}}]}\n"),
			`spec.predictor.autoScaling.metrics[0].type: Forbidden: an HPA scales on Resource metrics (cpu, memory); a PodMetric metric needs autoscalerClass keda`},
		{"unknown mode", isvcYAML("mode", "  annotations: {serving.serval.dev/deploymentMode: Sideways}\n", sklearnModel),
			`metadata.annotations[serving.serval.dev/deploymentMode]: Unsupported value: "Sideways"`},
		{"deploymentStrategy in Knative mode", isvcYAML("strategy", "  annotations: {serving.serval.dev/deploymentMode: Knative}\n", sklearnModel+"    deploymentStrategy: {type: Recreate}\n"),
			`spec.predictor.deploymentStrategy: Forbidden: deploymentStrategy applies to Standard mode only`},
		{"unknown storage scheme", isvcYAML("ftp", "", "    model:\n      modelFormat: {name: sklearn}\n      storageUri: ftp://host/m\n"),
			`spec.predictor.model.storageUri: Invalid value: "ftp://host/m": storageUri scheme "ftp" is not supported; use gs://, s3://, http(s)://, hf://, pvc:// or oci:// (oci+native://, oci+fetch://)`},
		{"an OCI URI without an image", isvcYAML("oci", "", "    model:\n      modelFormat: {name: sklearn}\n      storageUri: 'oci://'\n"),
			`spec.predictor.model.storageUri: Invalid value: "oci://": storageUri "oci://" does not name an image (no image is named); use oci://{registry}/{repository}:{tag} or @{digest}`},
		{"an OCI URI that does not parse", isvcYAML("oci-bad", "", "    model:\n      modelFormat: {name: sklearn}\n      storageUri: 'oci://registry.example.com/Models/Iris:1'\n"),
			`storageUri "oci://registry.example.com/Models/Iris:1" does not name an image (invalid reference format: repository name (Models/Iris) must be lowercase)`},
		{"storageUris over /etc", isvcYAML("uris-etc", "", "    model: {modelFormat: {name: sklearn}}\n    storageUris: [{uri: gs://b/a, mountPath: /etc}]\n"),
			`spec.predictor.storageUris[0].mountPath: Invalid value: "/etc" would hide the container's own /etc; mount models in a directory of their own, such as /mnt/models/{name}`},
		{"an HPA target of 100000 percent", isvcYAML("hpa-target", "", sklearnModel+"    scaleTarget: 100000\n"),
			`spec.predictor.scaleTarget: Invalid value: 100000: the target utilization percentage should be a [1-100] integer`},
		{"a KEDA target of -10", isvcYAML("keda-target", "  annotations: {serving.serval.dev/autoscalerClass: keda}\n", sklearnModel+
			"    autoScaling: {metrics: [{type: External, external: {metric: {serverAddress: 'http://prom:9090', query: q}, target: {type: Value, value: '-10'}}}]}\n"),
			`spec.predictor.autoScaling.metrics[0].external.target.value: Invalid value: "-10": must be greater than 0`},
		{"storageUris with a relative path", isvcYAML("uris-relative", "", "    model: {modelFormat: {name: sklearn}}\n    storageUris: [{uri: gs://b/a, mountPath: models/a}]\n"),
			`spec.predictor.storageUris[0].mountPath: Invalid value: "models/a" is not an absolute path`},
		{"two claims at one path", isvcYAML("uris-claims", "", "    model: {modelFormat: {name: sklearn}}\n    storageUris: [{uri: pvc://a/m, mountPath: /mnt/m}, {uri: pvc://b/m, mountPath: /mnt/m}]\n"),
			`spec.predictor.storageUris[1].mountPath: Invalid value: "/mnt/m" is where the claim of [0] is mounted too; each claim needs a path of its own`},
		{"storageUris with an OCI image", isvcYAML("uris-oci", "", "    model: {modelFormat: {name: sklearn}}\n    storageUris: [{uri: 'oci://r/m:1', mountPath: /mnt/m}]\n"),
			`spec.predictor.storageUris: Invalid value: storageUris[0]: oci://r/m:1 is an OCI image; storageUris takes gs://, s3://, http(s)://, hf:// and pvc:// URIs (an OCI model goes in storageUri)`},
		{"storageUris and storageUri", isvcYAML("uris-both", "", sklearnModel+"    storageUris: [{uri: gs://b/a, mountPath: /mnt/m}]\n"),
			`spec.predictor.storageUris: Invalid value: 1: storageUris and model.storageUri (or model.storage) are exclusive: list every model in storageUris`},
		{"unknown field in a schemaless container", isvcYAML("typo", "", "    containers:\n      - name: c\n        imagee: x\n"),
			`spec.predictor.containers[0].imagee: Forbidden: unknown field; check its spelling and indentation`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := create(tt.manifest)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "admission webhook \"inferenceservice.validate.serving.serval.dev\" denied the request")
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	// A mistyped field in a schemaless subtree does not even decode: the
	// mutating webhook, first in line, refuses it with the field's path,
	// before it could send back a patch of a spec it could not read.
	for _, tt := range []struct{ name, container, want string }{
		{"mistyped-port", "ports: [{containerPort: eighty}]",
			"spec: Invalid value: does not decode: spec.predictor.containers[0].ports[0].containerPort: must be a whole number, not a string"},
		{"env-number", "env: [{name: PORT, value: 8080}]",
			"spec: Invalid value: does not decode: spec.predictor.containers[0].env[0].value: must be a string, not a number"},
	} {
		err := create(isvcYAML(tt.name, "", "    containers:\n      - name: c\n        "+tt.container+"\n"))
		require.Error(t, err, tt.name)
		assert.Contains(t, err.Error(), `admission webhook "inferenceservice.mutate.serving.serval.dev" denied the request`)
		assert.Contains(t, err.Error(), tt.want)
	}
}

// TestLegacyManifestIsConverted: a KServe-style sklearn: predictor is
// accepted and defaulted to model.modelFormat; a legacy mode is normalised.
func TestLegacyManifestIsConverted(t *testing.T) {
	require.NoError(t, create(isvcYAML("legacy", "  annotations: {serving.serval.dev/deploymentMode: RawDeployment}\n",
		"    sklearn:\n      storageUri: gs://models/iris\n")))
	got := &v1beta1.InferenceService{}
	require.NoError(t, k8s.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "legacy"}, got))
	require.NotNil(t, got.Spec.Predictor.Model)
	assert.Equal(t, "sklearn", got.Spec.Predictor.Model.ModelFormat.Name)
	assert.Equal(t, "gs://models/iris", *got.Spec.Predictor.Model.StorageURI)
	assert.Nil(t, got.Spec.Predictor.SKLearn)
	assert.Equal(t, "Standard", got.Annotations[v1beta1.DeploymentModeAnnotation])
	assert.Nil(t, got.Spec.Predictor.Model.ProtocolVersion, "the protocol is not guessed at admission")
}

// TestCustomContainerGetsDefaultResources: the config's resources go to a
// custom container that sets none.
func TestCustomContainerGetsDefaultResources(t *testing.T) {
	require.NoError(t, create(isvcYAML("custom", "", "    containers:\n      - name: kserve-container\n        image: example.com/m:1\n")))
	got := &v1beta1.InferenceService{}
	require.NoError(t, k8s.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "custom"}, got))
	assert.Equal(t, "2Gi", got.Spec.Predictor.Containers[0].Resources.Limits.Memory().String())
}

// TestWedgedObjectAcceptsAnUnrelatedUpdate: an object that breaks a rule
// (created while the webhook was away) can still be updated, but not broken
// further.
func TestWedgedObjectAcceptsAnUnrelatedUpdate(t *testing.T) {
	ctx := context.Background()
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	require.NoError(t, k8s.Get(ctx, types.NamespacedName{Name: servalwebhook.ValidatingConfigName}, vwc))
	saved := vwc.DeepCopy()
	require.NoError(t, k8s.Delete(ctx, vwc))
	name := strings.Repeat("w", 48)
	require.NoError(t, create(isvcYAML(name, "", sklearnModel)))
	saved.ResourceVersion = ""
	require.NoError(t, k8s.Create(ctx, saved))

	key := types.NamespacedName{Namespace: "default", Name: name}
	update := func(change func(*v1beta1.InferenceService)) error {
		isvc := &v1beta1.InferenceService{}
		require.NoError(t, k8s.Get(ctx, key, isvc))
		change(isvc)
		return k8s.Update(ctx, isvc)
	}
	require.Eventually(t, func() bool {
		return update(func(i *v1beta1.InferenceService) { i.Spec.Predictor.MinReplicas = ptrTo[int32](-1) }) != nil
	}, 10e9, 1e8, "the restored webhook rejects a new problem")
	require.NoError(t, update(func(i *v1beta1.InferenceService) {
		if i.Labels == nil {
			i.Labels = map[string]string{}
		}
		i.Labels["team"] = "a"
	}), "an unrelated update of the wedged object is accepted")
}

func ptrTo[T any](v T) *T { return &v }

// TestHostLabelTooLong: the hosts the configured domain template renders must
// fit a DNS label; a long namespace makes the predictor's host too long.
func TestHostLabelTooLong(t *testing.T) {
	ns := strings.Repeat("h", 50)
	require.NoError(t, create("apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}\n"))
	manifest := strings.Replace(isvcYAML("model", "", sklearnModel), "namespace: default", "namespace: "+ns, 1)
	err := create(manifest)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `the host "model-predictor-`+ns+`.example.com" (ingress.domainTemplate) is not valid: the first label "model-predictor-`+ns+`" is 66 characters, over the 63 a DNS label allows`)
	require.NoError(t, create(strings.Replace(isvcYAML("model", "  labels: {networking.serval.dev/visibility: cluster-local}\n", sklearnModel),
		"namespace: default", "namespace: "+ns, 1)), "a cluster-local InferenceService has no host")
}

// TestStorageURIsWhereKServeHasThem: spec.predictor.storageUris is KServe's
// place for the field, and it is taken there.
func TestStorageURIsWhereKServeHasThem(t *testing.T) {
	require.NoError(t, create(isvcYAML("uris", "", "    model: {modelFormat: {name: sklearn}}\n"+
		"    storageUris: [{uri: 'gs://b/a', mountPath: /mnt/models/a}, {uri: 'pvc://claim/b', mountPath: /mnt/models/b}]\n")))
}

// TestKEDAIsAdmitted: autoscalerClass keda with KServe's autoScaling
// metrics, scaling to zero.
func TestKEDAIsAdmitted(t *testing.T) {
	manifest := func(name string) string {
		return isvcYAML(name, "  annotations: {serving.serval.dev/autoscalerClass: keda}\n", sklearnModel+
			"    minReplicas: 0\n    autoScaling: {metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]}\n")
	}
	// Without KEDA's CRDs (an earlier run's may still be going away).
	paths, err := testenv.UpstreamCRDPathsOf(testenv.KEDA)
	require.NoError(t, err)
	opts := envtest.CRDInstallOptions{Paths: paths}
	require.NoError(t, envtest.ReadCRDFiles(&opts))
	for _, c := range opts.CRDs {
		crd := &metav1.PartialObjectMetadata{}
		crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		testenv.Eventually(t, "no CRD "+c.Name, func() bool {
			return apierrors.IsNotFound(k8s.Get(context.Background(), types.NamespacedName{Name: c.Name}, crd))
		})
	}
	t.Cleanup(func() {
		for _, name := range []string{"keda-later", "keda"} {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("InferenceService"))
			u.SetNamespace("default")
			u.SetName(name)
			_ = k8s.Delete(context.Background(), u)
		}
	})
	err = create(manifest("keda-without"))
	require.Error(t, err, "scale to zero without KEDA: nothing would scale it up")
	assert.Contains(t, err.Error(), "spec.predictor.minReplicas: Invalid value: 0: scale to zero in Standard mode needs KEDA, "+
		"and its CRD scaledobjects.keda.sh is not installed")
	// An update that brings minReplicas 0 is refused the same way.
	require.NoError(t, create(strings.Replace(manifest("keda-later"), "minReplicas: 0", "minReplicas: 1", 1)))
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("InferenceService"))
	u.SetNamespace("default")
	u.SetName("keda-later")
	// A merge patch: the manager may write the object meanwhile.
	err = k8s.Patch(context.Background(), u, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"predictor":{"minReplicas":0}}}`)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "scale to zero in Standard mode needs KEDA")

	opts = envtest.CRDInstallOptions{Paths: paths}
	_, err = envtest.InstallCRDs(env.Config, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = envtest.UninstallCRDs(env.Config, opts) })
	testenv.Eventually(t, "admitted once KEDA's CRD is installed", func() bool { return create(manifest("keda")) == nil })
}

// TestStorageURIsAsKServeTakesThem: an entry without a mountPath is at
// /mnt/models (the CRD's default), and downloads may share a path or nest.
func TestStorageURIsAsKServeTakesThem(t *testing.T) {
	require.NoError(t, create(isvcYAML("uris-default", "", "    model: {modelFormat: {name: sklearn}}\n"+
		"    storageUris: [{uri: gs://b/model}, {uri: hf://org/tokenizer, mountPath: /mnt/models/tokenizer}, {uri: gs://b/extra}]\n")))
	got := &v1beta1.InferenceService{}
	require.NoError(t, k8s.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "uris-default"}, got))
	assert.Equal(t, "/mnt/models", got.Spec.Predictor.StorageURIs[0].MountPath)
	assert.Equal(t, "/mnt/models/tokenizer", got.Spec.Predictor.StorageURIs[1].MountPath)
	assert.Equal(t, "/mnt/models", got.Spec.Predictor.StorageURIs[2].MountPath)
}

// warnings collects the admission warnings the API server passes on.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

// TestStopValueWarned: an InferenceService's stop annotation that is not
// true or false is admitted with a warning saying it keeps running, on
// create and on the update that sets it; true is not warned of.
func TestStopValueWarned(t *testing.T) {
	ctx := context.Background()
	w := &warnings{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = w
	c, err := client.New(cfg, client.Options{Scheme: k8s.Scheme()})
	require.NoError(t, err)
	obj := &unstructured.Unstructured{}
	require.NoError(t, sigsyaml.Unmarshal([]byte(isvcYAML("stop-yes", "  annotations: {serving.serval.dev/stop: 'yes'}\n", sklearnModel)), &obj.Object))
	// Gone from a run before (-count), so that its create is warned of.
	testenv.Eventually(t, "no stop-yes", func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(obj), &unstructured.Unstructured{Object: map[string]any{"apiVersion": obj.GetAPIVersion(), "kind": obj.GetKind()}}))
	})
	require.NoError(t, c.Create(ctx, obj))
	t.Cleanup(func() { _ = k8s.Delete(ctx, obj) })
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(obj), obj))
		obj.SetAnnotations(map[string]string{"serving.serval.dev/stop": "t"})
		return c.Update(ctx, obj)
	}))
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error {
		require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(obj), obj))
		obj.SetAnnotations(map[string]string{"serving.serval.dev/stop": "true"})
		return c.Update(ctx, obj)
	}))
	w.mu.Lock()
	defer w.mu.Unlock()
	// An update tried again on a conflict (the manager writes the object
	// too) is warned of again: the distinct warnings are what count.
	distinct := map[string]bool{}
	for _, text := range w.seen {
		distinct[text] = true
	}
	assert.Equal(t, map[string]bool{
		`metadata.annotations[serving.serval.dev/stop] is "yes": only "true" (any case) stops the service; it keeps running`: true,
		`metadata.annotations[serving.serval.dev/stop] is "t": only "true" (any case) stops the service; it keeps running`:   true,
	}, distinct, "true is not warned of")
}
