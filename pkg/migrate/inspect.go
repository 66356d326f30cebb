package migrate

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

type finding struct {
	path, msg string
	blocking  bool
}

// legacyFrameworks are KServe's legacy predictor keys.
var legacyFrameworks = []string{"sklearn", "xgboost", "lightgbm", "tensorflow", "pytorch", "triton", "onnx", "huggingface", "pmml", "paddle"}

// noV1Formats are the formats that no default runtime serves over v1: where
// KServe means v1 for them (a model: with no protocolVersion), it finds no
// runtime, and Serval would fall back to a v2 runtime (Triton, MLServer).
var noV1Formats = map[string]bool{"onnx": true, "tensorrt": true, "triton": true, "mlflow": true}

// knownAnnotations are the KServe annotations Serval implements (under its
// own prefix); any other serving.kserve.io/ annotation is reported.
var knownAnnotations = map[string]bool{
	v1beta1.DeploymentModeAnnotation:     true,
	v1beta1.AutoscalerClassAnnotation:    true,
	v1beta1.StorageSecretNameAnnotation:  true,
	v1beta1.DisableAutoUpdateAnnotation:  true,
	v1beta1.PrometheusScrapeAnnotation:   true,
	v1beta1.StopAnnotation:               true,
	v1alpha1.NodeGroupAnnotation:         true,
	v1alpha1.DisableLocalModelAnnotation: true,
}

// inspect pins the protocol where needed, writes the deployment mode where
// KServe's default meant Knative, and notes what changes; what Serval
// refuses comes from admission (admissionFindings).
func inspect(kind string, obj *yaml.Node, opts Options) []finding {
	spec := lookup(obj, "spec")
	if strings.HasPrefix(kind, "LocalModel") {
		return localModelFindings(kind, spec)
	}
	if kind != "InferenceService" {
		return nil
	}
	metadata := lookup(obj, "metadata")
	var out []finding
	out = append(out, annotationFindings(lookup(metadata, "annotations"))...)
	out = append(out, modeFindings(metadata, spec, opts)...)
	out = append(out, canaryFindings(metadata, spec)...)
	for _, component := range []string{"predictor", "transformer", "explainer"} {
		c := lookup(spec, component)
		if c == nil {
			continue
		}
		path := "spec." + component
		out = append(out, autoScalingNotes(metadata, c, path)...)
		if component == "predictor" {
			out = append(out, predictorFindings(c, path, opts)...)
			out = append(out, storageNotes(c, path)...)
		}
	}
	return out
}

// annotationFindings notes the KServe annotations Serval does not
// implement: kept, and ignored.
func annotationFindings(annotations *yaml.Node) []finding {
	if annotations == nil || annotations.Kind != yaml.MappingNode {
		return nil
	}
	var out []finding
	for i := 0; i+1 < len(annotations.Content); i += 2 {
		key := annotations.Content[i].Value
		if strings.HasPrefix(key, servalGroup+"/") && !knownAnnotations[key] {
			out = append(out, finding{path: "metadata.annotations[" + key + "]", msg: "Serval does not implement " +
				kserveGroup + strings.TrimPrefix(key, servalGroup) + "; the annotation is kept and ignored"})
		}
	}
	return out
}

// predictorFindings checks the model (or legacy key) for the protocol pin:
// where KServe means v1 and no runtime serves the format over v1 (KServe
// finds no runtime), Serval would choose a v2 runtime instead. Where
// KServe's defaulting means v2 (triton, vLLM, the legacy triton:, onnx: and
// huggingface: keys), Serval's defaulting does the same, and nothing is
// pinned.
func predictorFindings(p *yaml.Node, path string, opts Options) []finding {
	model, format, modelPath, legacy := lookup(p, "model"), "", path+".model", ""
	if name := lookup(lookup(model, "modelFormat"), "name"); name != nil {
		format = name.Value
	}
	for _, key := range legacyFrameworks {
		if m := lookup(p, key); m != nil && model == nil {
			model, format, modelPath, legacy = m, key, path+"."+key, key
		}
	}
	if model == nil || lookup(model, "protocolVersion") != nil || !noV1Formats[format] || v1beta1.DefaultProtocol(format, legacy) != "" {
		return nil
	}
	msg := "no protocolVersion: KServe uses v1, for which no default runtime serves " + format
	if opts.NoPinProtocol {
		return []finding{{path: modelPath, msg: msg + "; left unset, so Serval chooses a v2 runtime"}}
	}
	model.Content = append(model.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Value: "protocolVersion"},
		&yaml.Node{Kind: yaml.ScalarNode, Value: "v1"})
	return []finding{{path: modelPath + ".protocolVersion",
		msg: msg + "; pinned protocolVersion: v1 to keep KServe's behaviour (remove it, or use --no-pin-protocol, to let Serval choose v2)"}}
}

// localModelFindings are what changes for the model cache kinds: a node's
// list is the manager's to write; a namespace cache on node groups
// downloads in its own namespace.
func localModelFindings(kind string, spec *yaml.Node) []finding {
	switch kind {
	case "LocalModelNode":
		return []finding{{path: "spec.localModels", msg: "the manager writes each node's list from the caches: applying it is not needed, and the manager rewrites it"}}
	case "LocalModelNamespaceCache":
		if lookup(spec, "pvcRef") != nil {
			return nil // one download Job in its namespace, as on KServe
		}
		return []finding{{path: "spec", msg: "its download Jobs run in its own namespace, with the ServiceAccount and storage-config Secret of that namespace (KServe runs them in its Jobs' namespace)"}}
	}
	return nil
}
