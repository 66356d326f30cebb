package migrate

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// modeFindings handles an InferenceService without a deployment-mode
// annotation. KServe ships with Serverless as its default mode and Serval
// with Standard, so such a manifest would change mode. When the source
// cluster's default (Options.DefaultMode) was Serverless and the manifest
// uses settings only Knative mode has, the Knative annotation is written:
// in Standard mode Serval's webhook would reject them. Otherwise a note says
// that the InferenceService changes mode.
func modeFindings(metadata, spec *yaml.Node, opts Options) []finding {
	annotations := lookup(metadata, "annotations")
	if lookup(annotations, v1beta1.DeploymentModeAnnotation) != nil {
		return nil
	}
	sourceMode := opts.sourceMode()
	knativeOnly := knativeOnlySettings(spec)
	path := "metadata.annotations[" + v1beta1.DeploymentModeAnnotation + "]"
	switch {
	case sourceMode == v1beta1.Knative && len(knativeOnly) > 0:
		annotations = ensureMapping(metadata, "annotations")
		annotations.Content = append(annotations.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Value: v1beta1.DeploymentModeAnnotation},
			&yaml.Node{Kind: yaml.ScalarNode, Value: string(v1beta1.Knative)})
		return []finding{{path: path, msg: "no deployment mode: it ran Serverless (the source's default, --default-mode), and it uses " +
			strings.Join(knativeOnly, ", ") + ", which only Knative mode has; wrote deploymentMode: Knative (Serval's default is Standard)"}}
	case sourceMode == v1beta1.Knative:
		return []finding{{path: path, msg: "no deployment mode: it ran Serverless (the source's default, --default-mode); " +
			"Serval's default is Standard, so it becomes a Deployment; add deploymentMode: Knative to keep Knative"}}
	case len(knativeOnly) > 0:
		return []finding{{path: path, msg: "no deployment mode: it ran RawDeployment (the source's default, --default-mode), and it uses " +
			strings.Join(knativeOnly, ", ") + ", which KServe's RawDeployment mode ignores; Serval runs it in Standard mode, where admission checks each"}}
	}
	return nil
}

// knativeOnlySettings lists the settings of the components that only
// Knative mode has.
func knativeOnlySettings(spec *yaml.Node) []string {
	var found []string
	for _, component := range []string{"predictor", "transformer", "explainer"} {
		c := lookup(spec, component)
		if c == nil {
			continue
		}
		path := "spec." + component + "."
		if v := lookup(c, "minReplicas"); v != nil && v.Value == "0" {
			found = append(found, path+"minReplicas: 0")
		}
		if v := lookup(c, "scaleMetric"); v != nil && (v.Value == "concurrency" || v.Value == "rps") {
			found = append(found, path+"scaleMetric: "+v.Value)
		}
		keys := []string{"containerConcurrency"}
		if component != "predictor" {
			// The predictor's splits traffic in Standard mode too.
			keys = append(keys, "canaryTrafficPercent")
		}
		for _, key := range keys {
			if lookup(c, key) != nil {
				found = append(found, path+key)
			}
		}
	}
	return found
}

// ensureMapping returns the mapping under key in m, creating it if needed.
func ensureMapping(m *yaml.Node, key string) *yaml.Node {
	if v := lookup(m, key); v != nil && v.Kind == yaml.MappingNode {
		return v
	}
	v := &yaml.Node{Kind: yaml.MappingNode}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	return v
}

// canaryFindings notes a predictor's canaryTrafficPercent that will run in
// Standard mode: KServe ignores it in RawDeployment mode, Serval splits
// the traffic with it.
func canaryFindings(metadata, spec *yaml.Node) []finding {
	predictor := lookup(spec, "predictor")
	if lookup(predictor, "canaryTrafficPercent") == nil {
		return nil
	}
	if v := lookup(lookup(metadata, "annotations"), v1beta1.DeploymentModeAnnotation); v != nil {
		if mode, _ := v1beta1.NormalizeDeploymentMode(v.Value); mode == v1beta1.Knative {
			return nil
		}
	}
	return []finding{{path: "spec.predictor.canaryTrafficPercent", msg: "in Standard mode Serval splits the predictor's traffic with it " +
		"(KServe's RawDeployment mode ignores it): a change runs as {name}-predictor-canary beside the revision last rolled out, " +
		"routed by Gateway API or Istio (the Kubernetes Ingress cannot split and is refused); remove it to roll changes out at once"}}
}
