package presets

import (
	"knative.dev/pkg/kmeta"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
)

// Prefix starts the names of the well-known presets Serval installs:
// KServe's are kserve-config-llm-*, Serval's serval-config-llm-* (serval
// migrate renames a KServe user's own overrides of them).
const Prefix = "serval-"

// The well-known presets, by name.
const (
	Template                          = Prefix + "config-llm-template"
	DecodeTemplate                    = Prefix + "config-llm-decode-template"
	PrefillTemplate                   = Prefix + "config-llm-prefill-template"
	WorkerDataParallel                = Prefix + "config-llm-worker-data-parallel"
	DecodeWorkerDataParallel          = Prefix + "config-llm-decode-worker-data-parallel"
	PrefillWorkerDataParallel         = Prefix + "config-llm-prefill-worker-data-parallel"
	WorkerPipelineParallel            = Prefix + "config-llm-worker-pipeline-parallel"
	DecodeWorkerPipelineParallel      = Prefix + "config-llm-decode-worker-pipeline-parallel"
	PrefillWorkerPipelineParallel     = Prefix + "config-llm-prefill-worker-pipeline-parallel"
	Scheduler                         = Prefix + "config-llm-scheduler"
	RouterRoute                       = Prefix + "config-llm-router-route"
	Tokenizer                         = Prefix + "config-llm-tokenizer"
	SchedulerLatencyPredictor         = Prefix + "config-llm-scheduler-latency-predictor"
	Tracing                           = Prefix + "config-llm-tracing"
	defaultEndpointPickerPort         = 9002
	componentWorkload                 = "workload"
	partOfLLMInferenceService         = "llminferenceservice"
	labelAppName, labelAppPartOf      = "app.kubernetes.io/name", "app.kubernetes.io/part-of"
	labelComponent                    = "serving.serval.dev/component"
	workloadServiceSuffix, poolSuffix = "-kserve-workload-svc", "-inference-pool"
	eppServiceSuffix, eppSASuffix     = "-epp-service", "-epp-sa"
)

// WellKnown names the well-known presets a spec's shape calls for, in the
// order they are merged (KServe's): the scheduler's (unless the pool is the
// user's own), the tokenizer's (when the scheduler config asks for one), the
// latency predictor's (when it uses predicted-latency-producer), the
// route's (unless the routes are the user's own), tracing's, then the
// workload's by its shape (single-node, data or pipeline parallel across
// nodes, prefill and decode).
func WellKnown(spec *v1alpha2.LLMInferenceServiceSpec) []string {
	var out []string
	r := spec.Router
	if r != nil && r.Scheduler != nil && !r.Scheduler.Pool.HasRef() {
		out = append(out, Scheduler)
	}
	if TokenizerEnabled(spec) {
		out = append(out, Tokenizer)
	}
	if r != nil && r.Scheduler != nil && r.Scheduler.Config.PluginTypes()[LatencyProducerPlugin] {
		out = append(out, SchedulerLatencyPredictor)
	}
	if r != nil && r.Route != nil && (r.Route.HTTP == nil || len(r.Route.HTTP.Refs) == 0) {
		out = append(out, RouterRoute)
	}
	if spec.Tracing != nil {
		out = append(out, Tracing)
	}
	workload := func(w *v1alpha2.WorkloadSpec, single, dataParallel, pipelineParallel string) {
		switch {
		case w.Worker == nil:
			out = append(out, single)
		case w.Parallelism.IsDataParallel():
			out = append(out, dataParallel)
		case w.Parallelism.IsPipelineParallel():
			out = append(out, pipelineParallel)
		}
	}
	if spec.Prefill != nil {
		workload(spec.Prefill, PrefillTemplate, PrefillWorkerDataParallel, PrefillWorkerPipelineParallel)
		workload(&spec.WorkloadSpec, DecodeTemplate, DecodeWorkerDataParallel, DecodeWorkerPipelineParallel)
	} else {
		workload(&spec.WorkloadSpec, Template, WorkerDataParallel, WorkerPipelineParallel)
	}
	return out
}

// LatencyProducerPlugin is the picker's plugin that predicts each
// request's latency from the training and prediction servers the latency
// predictor's preset adds beside the picker.
const LatencyProducerPlugin = "predicted-latency-producer"

// TokenizerEnabled reports whether the service gets a standalone tokenizer:
// when the scheduler's tokenizer is configured, or its inline config uses a
// plugin that needs one (token-producer, precise-prefix-cache-scorer).
func TokenizerEnabled(spec *v1alpha2.LLMInferenceServiceSpec) bool {
	r := spec.Router
	if r == nil || r.Scheduler == nil {
		return false
	}
	if r.Scheduler.Tokenizer != nil {
		return true
	}
	types := r.Scheduler.Config.PluginTypes()
	for _, p := range v1alpha2.TokenizerPlugins {
		if types[p] {
			return true
		}
	}
	return false
}

// WorkloadSelector are the labels of the model pods that the InferencePool
// selects.
func WorkloadSelector(name string) map[string]string {
	return map[string]string{labelAppPartOf: partOfLLMInferenceService, labelAppName: name, labelComponent: componentWorkload}
}

// WorkloadServiceName is the Service in front of the model pods.
func WorkloadServiceName(name string) string { return kmeta.ChildName(name, workloadServiceSuffix) }

// InferencePoolName is the InferencePool Serval makes for a service.
func InferencePoolName(name string) string { return kmeta.ChildName(name, poolSuffix) }

// EPPServiceName is the endpoint picker's Service.
func EPPServiceName(name string) string { return kmeta.ChildName(name, eppServiceSuffix) }

// EPPServiceAccountName is the endpoint picker's ServiceAccount.
func EPPServiceAccountName(name string) string { return kmeta.ChildName(name, eppSASuffix) }

// PoolName is the pool the route's backends name: the user's own, else
// the one Serval makes.
func PoolName(svc *v1alpha2.LLMInferenceService, r *v1alpha2.RouterSpec) string {
	if r != nil && r.Scheduler != nil && r.Scheduler.Pool.HasRef() {
		return r.Scheduler.Pool.Ref.Name
	}
	return InferencePoolName(svc.Name)
}
