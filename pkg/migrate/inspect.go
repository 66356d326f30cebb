package migrate

import (
	"go.yaml.in/yaml/v3"
)

type finding struct {
	path, msg string
	blocking  bool
}

// legacyFrameworks are KServe's legacy predictor keys.
var legacyFrameworks = []string{"sklearn", "xgboost", "lightgbm", "tensorflow", "pytorch", "triton", "onnx", "huggingface", "pmml", "paddle"}

// noV1Formats are the formats that no default runtime serves over v1: KServe
// reads a missing protocolVersion as v1 and finds no runtime for them, where
// Serval falls back to a v2 runtime (Triton, MLServer).
var noV1Formats = map[string]bool{"onnx": true, "tensorrt": true, "triton": true, "mlflow": true}

// inspect reports what Serval rejects and pins the protocol where needed.
func inspect(kind string, obj *yaml.Node, opts Options) []finding {
	spec := lookup(obj, "spec")
	if kind != "InferenceService" {
		return unsupported(spec, "spec", []string{"grpcEndpoint", "grpcDataEndpoint", "httpDataEndpoint", "replicas", "storageHelper", "builtInAdapter", "workerSpec"})
	}
	var out []finding
	out = append(out, annotationFindings(lookup(lookup(obj, "metadata"), "annotations"))...)
	for _, component := range []string{"predictor", "transformer", "explainer"} {
		c := lookup(spec, component)
		if c == nil {
			continue
		}
		path := "spec." + component
		out = append(out, unsupported(c, path, []string{"logger", "batcher", "autoScaling", "workerSpec", "art"})...)
		if component == "predictor" {
			out = append(out, predictorFindings(c, path, opts)...)
		}
	}
	return out
}

func unsupported(m *yaml.Node, path string, fields []string) []finding {
	var out []finding
	for _, f := range fields {
		if lookup(m, f) != nil {
			out = append(out, finding{path: path + "." + f, msg: f + " is not supported by Serval yet; the field is rejected", blocking: true})
		}
	}
	return out
}

func annotationFindings(annotations *yaml.Node) []finding {
	var out []finding
	if v := lookup(annotations, servalGroup+"/autoscalerClass"); v != nil && v.Value == "keda" {
		out = append(out, finding{path: "metadata.annotations[" + servalGroup + "/autoscalerClass]",
			msg: "autoscalerClass keda is not supported by Serval yet", blocking: true})
	}
	if v := lookup(annotations, servalGroup+"/deploymentMode"); v != nil && v.Value == "ModelMesh" {
		out = append(out, finding{path: "metadata.annotations[" + servalGroup + "/deploymentMode]",
			msg: "ModelMesh is not served by Serval", blocking: true})
	}
	return out
}

// predictorFindings checks the model (or legacy key): unsupported storage
// fields, and the protocol pin.
func predictorFindings(p *yaml.Node, path string, opts Options) []finding {
	model, format, modelPath := lookup(p, "model"), "", path+".model"
	if name := lookup(lookup(model, "modelFormat"), "name"); name != nil {
		format = name.Value
	}
	for _, key := range legacyFrameworks {
		if m := lookup(p, key); m != nil && model == nil {
			model, format, modelPath = m, key, path+"."+key
		}
	}
	if model == nil {
		return nil
	}
	out := unsupported(model, modelPath, []string{"storageUris"})
	if lookup(model, "protocolVersion") != nil || !noV1Formats[format] {
		return out
	}
	msg := "no protocolVersion: KServe uses v1, for which no default runtime serves " + format
	if opts.NoPinProtocol {
		return append(out, finding{path: modelPath, msg: msg + "; left unset, so Serval chooses a v2 runtime"})
	}
	model.Content = append(model.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Value: "protocolVersion"},
		&yaml.Node{Kind: yaml.ScalarNode, Value: "v1"})
	return append(out, finding{path: modelPath + ".protocolVersion",
		msg: msg + "; pinned protocolVersion: v1 to keep KServe's behaviour (remove it, or use --no-pin-protocol, to let Serval choose v2)"})
}
