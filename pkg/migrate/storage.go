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
			if scheme := unknownScheme(uri.Value); scheme != "" {
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

// autoScalingFindings reports a component's autoScaling without the KEDA
// autoscaler class, which Serval's webhook refuses (KServe's HPA takes its
// Resource metrics; Serval's takes scaleMetric and scaleTarget).
func autoScalingFindings(metadata, c *yaml.Node, path string) []finding {
	if lookup(c, "autoScaling") == nil {
		return nil
	}
	class := lookup(lookup(metadata, "annotations"), v1beta1.AutoscalerClassAnnotation)
	if class != nil && strings.EqualFold(class.Value, string(v1beta1.AutoscalerKEDA)) {
		return nil
	}
	return []finding{{path: path + ".autoScaling", blocking: true, msg: "Serval takes autoScaling with the autoscalerClass keda annotation only " +
		"(KServe's HPA also reads its cpu and memory metrics): " + rejectedByWebhook +
		"; add serving.serval.dev/autoscalerClass: keda, or write the metric as scaleMetric and scaleTarget"}}
}
