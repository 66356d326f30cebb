package migrate

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/storage"
)

// storageNotes notes the model URIs that KServe's default
// ClusterStorageContainer downloads and Serval's storage initializer does
// not: admission refuses them (admissionFindings) until the converted
// container is applied.
func storageNotes(c *yaml.Node, path string) []finding {
	var out []finding
	for _, key := range append([]string{"model"}, legacyFrameworks...) {
		if uri := lookup(lookup(c, key), "storageUri"); uri != nil && uri.Value != "" {
			if scheme := unknownScheme(uri.Value); kserveDefaultContainerSchemes[scheme] && !shippedContainerSchemes[scheme] {
				out = append(out, finding{path: path + "." + key + ".storageUri", msg: fmt.Sprintf(
					"KServe's default ClusterStorageContainer downloads %s:// URIs; migrate it too (serval migrate converts the kind) and apply it first", scheme)})
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

// autoScalingNotes say, for a metric an HPA does not scale on (KServe's
// skips it without a word; Serval's admission refuses it), what scaling
// on it through KEDA takes.
func autoScalingNotes(metadata, c *yaml.Node, path string) []finding {
	class := ""
	if v := lookup(lookup(metadata, "annotations"), v1beta1.AutoscalerClassAnnotation); v != nil {
		class = strings.ToLower(v.Value)
	}
	metrics := lookup(lookup(c, "autoScaling"), "metrics")
	if (class != "" && class != string(v1beta1.AutoscalerHPA)) || metrics == nil || metrics.Kind != yaml.SequenceNode {
		return nil
	}
	var out []finding
	for i, m := range metrics.Content {
		if t := lookup(m, "type"); t != nil && t.Value != "Resource" {
			out = append(out, finding{path: fmt.Sprintf("%s.autoScaling.metrics[%d]", path, i), msg: fmt.Sprintf(
				"KServe's HPA skips the %s metric; %s", t.Value, kedaAdvice(t.Value))})
		}
	}
	return out
}
