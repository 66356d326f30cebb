package migrate

import (
	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/config"
	"github.com/serval-dev/serval/pkg/webhook"
)

// admissionFindings are what Serval's admission would refuse of the
// converted document: the CRD's schema, as the API server checks it first,
// then the webhooks' own rules (webhook.Offline), on a
// cluster with the default serval-config, the ClusterStorageContainers
// Serval ships and those of the files being migrated; and its warnings.
// Every blocking finding about a field comes from here, so that what
// migrate reports cannot disagree with what the cluster does.
func admissionFindings(kind string, obj *yaml.Node, scs []v1alpha1.ClusterStorageContainer) []finding {
	data, err := yaml.Marshal(obj)
	if err != nil {
		return []finding{{path: "", msg: "the converted document does not encode: " + err.Error(), blocking: true}}
	}
	doc, err := sigsyaml.YAMLToJSON(data)
	if err != nil {
		return []finding{{path: "", msg: "the converted document is not valid YAML: " + err.Error(), blocking: true}}
	}
	out := schemaFindings(doc)
	warnings, errs, _ := webhook.Offline(kind, doc, config.Default(), scs)
	for _, e := range errs {
		out = append(out, finding{path: e.Field, msg: e.ErrorBody() + ": rejected at admission by Serval's " + kind + " webhook", blocking: true})
	}
	for _, w := range warnings {
		out = append(out, finding{path: "", msg: "admission warns: " + w})
	}
	return out
}

// shippedContainers are the ClusterStorageContainers the chart installs
// (config/storagecontainers), as admission sees them: each takes its
// scheme's URIs.
func shippedContainers() []v1alpha1.ClusterStorageContainer {
	var out []v1alpha1.ClusterStorageContainer
	for scheme := range shippedContainerSchemes {
		sc := v1alpha1.ClusterStorageContainer{}
		sc.Name = scheme
		sc.Spec.Container.Name = "storage-initializer"
		sc.Spec.SupportedURIFormats = []v1alpha1.SupportedURIFormat{{Prefix: scheme + "://"}}
		sc.Spec.WorkloadType = v1alpha1.InitContainer
		out = append(out, sc)
	}
	return out
}
