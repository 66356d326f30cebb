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
		return []finding{{path: path, blocking: true, msg: "no deployment mode: it ran RawDeployment (the source's default, --default-mode), but it uses " +
			strings.Join(knativeOnly, ", ") + ", which only Knative mode has: " + rejectedByWebhook}}
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
		for _, key := range []string{"containerConcurrency", "canaryTrafficPercent"} {
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
