package migrate

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/storage"
)

// storageFindings reports the storage URIs of a component that Serval's
// storage initializer does not download (hdfs://, webhdfs://, ...): admission
// refuses them unless a ClusterStorageContainer supports them, which
// KServe's default one does for several.
func storageFindings(c *yaml.Node, path string) []finding {
	var out []finding
	for _, key := range append([]string{"model"}, legacyFrameworks...) {
		if uri := lookup(lookup(c, key), "storageUri"); uri != nil && uri.Value != "" {
			if scheme := unknownScheme(uri.Value); scheme != "" && !shippedContainerSchemes[scheme] {
				msg := fmt.Sprintf("Serval's storage initializer does not download %s:// URIs: rejected at admission unless a ClusterStorageContainer supports them", scheme)
				if kserveDefaultContainerSchemes[scheme] {
					msg += " (KServe's default one does; serval migrate converts it)"
				}
				out = append(out, finding{path: path + "." + key + ".storageUri", blocking: true, msg: msg})
			}
		}
	}
	if uris := lookup(c, "storageUris"); uris != nil && uris.Kind == yaml.SequenceNode {
		for i, u := range uris.Content {
			if uri := lookup(u, "uri"); uri != nil && unknownScheme(uri.Value) != "" {
				out = append(out, finding{path: fmt.Sprintf("%s.storageUris[%d].uri", path, i), blocking: true, msg: fmt.Sprintf(
					"storageUris take gs://, s3://, http(s)://, hf:// and pvc:// URIs, not %s:// (a ClusterStorageContainer serves storageUri only): %s",
					unknownScheme(uri.Value), rejectedByWebhook)})
			}
		}
	}
	return out
}

// shippedContainerSchemes are the schemes of the ClusterStorageContainers
// Serval ships (config/storagecontainers, installed by the chart): their
// storageUris are served, no finding (a test checks the list against the
// shipped files).
var shippedContainerSchemes = map[string]bool{"modelscope": true}

// kserveDefaultContainerSchemes are the schemes KServe's default
// ClusterStorageContainer lists that Serval's initializer does not know.
var kserveDefaultContainerSchemes = map[string]bool{"hdfs": true, "webhdfs": true, "modelscope": true}

// unknownScheme is the scheme of a URI Serval's storage initializer does
// not download, or "".
func unknownScheme(uri string) string {
	var schemeErr *storage.SchemeError
	if _, err := storage.Parse(uri); errors.As(err, &schemeErr) {
		return schemeErr.Scheme
	}
	return ""
}

// kedaAdvice says what scaling on a metric of the type through KEDA takes,
// in full: the annotation, and what must run in the cluster for it.
func kedaAdvice(metricType string) string {
	advice := "to scale on it, add serving.serval.dev/autoscalerClass: keda, with KEDA installed"
	if metricType == "PodMetric" {
		advice += ", and the OpenTelemetry operator and KEDA's OpenTelemetry add-on, which carry the pods' metrics to KEDA"
	}
	return advice
}

// autoScalingFindings reports a component's autoScaling that Serval's
// webhook refuses: with an autoscaler class other than keda or hpa, or
// under an HPA with metrics other than cpu and memory (KServe's HPA skips
// those without a word).
func autoScalingFindings(metadata, c *yaml.Node, path string) []finding {
	as := lookup(c, "autoScaling")
	if as == nil {
		return nil
	}
	class := ""
	if v := lookup(lookup(metadata, "annotations"), v1beta1.AutoscalerClassAnnotation); v != nil {
		class = strings.ToLower(v.Value)
	}
	switch class {
	case string(v1beta1.AutoscalerKEDA):
		return nil
	case "", string(v1beta1.AutoscalerHPA):
		var out []finding
		if metrics := lookup(as, "metrics"); metrics != nil && metrics.Kind == yaml.SequenceNode {
			for i, m := range metrics.Content {
				if t := lookup(m, "type"); t != nil && t.Value != "Resource" {
					out = append(out, finding{path: fmt.Sprintf("%s.autoScaling.metrics[%d]", path, i), blocking: true, msg: fmt.Sprintf(
						"an HPA scales on cpu and memory (KServe's skips the %s metric): %s; %s", t.Value, rejectedByWebhook, kedaAdvice(t.Value))})
				}
			}
		}
		return out
	}
	return []finding{{path: path + ".autoScaling", blocking: true, msg: "Serval takes autoScaling with autoscalerClass keda or hpa, not " + class +
		": " + rejectedByWebhook}}
}
