package components

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/runtime"
	"github.com/serval-dev/serval/pkg/storage"
)

// The model servers with defaults of their own, as KServe names them.
const (
	serverMLServer   = "mlserver"
	serverTorchServe = "torchserve"
)

// The labels KServe's own mlserver and torchserve runtimes read through
// {{.Labels.modelClass}} and {{.Labels.serviceEnvelope}}.
const (
	modelClassLabel      = "modelClass"
	serviceEnvelopeLabel = "serviceEnvelope"
)

// mlserverModelClasses are MLServer's implementations by model format;
// sklearn's is the default.
var mlserverModelClasses = map[string]string{
	"sklearn":  "mlserver_sklearn.SKLearnModel",
	"xgboost":  "mlserver_xgboost.XGBoostModel",
	"lightgbm": "mlserver_lightgbm.LightGBMModel",
	"mlflow":   "mlserver_mlflow.MLflowRuntime",
}

// serverType is the runtime's model server: its server-type annotation, or
// KServe's runtime names for the servers with defaults of their own.
func serverType(rt runtime.Runtime) string {
	if t := rt.Annotations[v1beta1.ServerTypeAnnotation]; t != "" {
		return t
	}
	switch rt.Name {
	case "kserve-mlserver":
		return serverMLServer
	case "kserve-torchserve":
		return serverTorchServe
	}
	return ""
}

// applyServerDefaults does what KServe's defaulting does for the MLServer
// and TorchServe runtimes, on the in-memory copy of the InferenceService:
// labels their runtimes' placeholders read, and the env they expect. Values
// the InferenceService sets are kept.
func applyServerDefaults(isvc *v1beta1.InferenceService, sel *runtime.Selection) {
	model := isvc.Spec.Predictor.Model
	if model == nil || sel == nil {
		return
	}
	setLabel := func(k, v string) {
		if isvc.Labels == nil {
			isvc.Labels = map[string]string{}
		}
		if _, ok := isvc.Labels[k]; !ok {
			isvc.Labels[k] = v
		}
	}
	switch serverType(sel.Runtime) {
	case serverMLServer:
		class, ok := mlserverModelClasses[model.ModelFormat.Name]
		if !ok {
			class = mlserverModelClasses["sklearn"]
		}
		setLabel(modelClassLabel, class)
		if model.StorageURI == nil && model.Storage == nil {
			model.Env = appendEnvIfMissing(model.Env, corev1.EnvVar{Name: "MLSERVER_LOAD_MODELS_AT_STARTUP", Value: "false"})
		} else {
			model.Env = appendEnvIfMissing(model.Env, corev1.EnvVar{Name: "MLSERVER_MODEL_NAME", Value: isvc.Name},
				corev1.EnvVar{Name: "MLSERVER_MODEL_URI", Value: storage.MountPath})
		}
		model.Env = appendEnvIfMissing(model.Env, corev1.EnvVar{Name: "MLSERVER_MODEL_IMPLEMENTATION", Value: isvc.Labels[modelClassLabel]})
	case serverTorchServe:
		envelope := "kserve"
		if sel.Protocol == v1beta1.ProtocolV2 || sel.Protocol == v1beta1.ProtocolGRPCV2 {
			envelope = "kservev2"
		}
		setLabel(serviceEnvelopeLabel, envelope)
		model.Env = appendEnvIfMissing(model.Env, corev1.EnvVar{Name: "PROTOCOL_VERSION", Value: string(sel.Protocol)})
	}
}

// appendEnvIfMissing appends each variable the list does not set yet.
func appendEnvIfMissing(env []corev1.EnvVar, vars ...corev1.EnvVar) []corev1.EnvVar {
	for _, v := range vars {
		if !hasEnv(env, v.Name) {
			env = append(env, v)
		}
	}
	return env
}

func hasEnv(env []corev1.EnvVar, name string) bool {
	for _, e := range env {
		if e.Name == name {
			return true
		}
	}
	return false
}
