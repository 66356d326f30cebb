package owner

import (
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// kindLabels are the owner kinds and the label that names an owner of the
// kind on its children and pods. A new owner kind adds its entry here, and
// the cache index below covers its children too.
var kindLabels = []struct{ kind, label string }{
	{"InferenceService", v1beta1.InferenceServiceLabel},
	{"InferenceGraph", v1alpha1.InferenceGraphLabel},
	{"LLMInferenceService", v1alpha2.LLMInferenceServiceLabel},
	{"LocalModelCache", v1alpha1.LocalModelCacheLabel},
	{"LocalModelNamespaceCache", v1alpha1.LocalModelNamespaceCacheLabel},
	{"LocalModelNodeGroup", v1alpha1.LocalModelNodeGroupLabel},
}

// Index is the cache index of pods and children by their owner. A list by
// label alone scans every object of the namespace: with a thousand
// InferenceServices in one namespace, that scan was most of the manager's
// CPU. One cache holds the children of every owner kind, so the value
// names the owner's label as well as its name: an InferenceService and an
// InferenceGraph of the same name never share one.
const Index = "serving.serval.dev/owner"

// IndexKey is the Index value of the children of the owner that label
// names as name.
func IndexKey(label, name string) string { return label + "=" + name }

// IndexValue is an object's Index value: its owner, by the owner label it
// carries.
func IndexValue(obj client.Object) []string {
	var out []string
	for _, k := range kindLabels {
		if name, ok := obj.GetLabels()[k.label]; ok {
			out = append(out, IndexKey(k.label, name))
		}
	}
	return out
}

// Key is the Index value of the owner's children.
func (r Ref) Key() string { return IndexKey(r.Label(), r.Name) }

// Label is the label that names the owner on its children; "" for a kind
// that owns nothing.
func (r Ref) Label() string {
	for _, k := range kindLabels {
		if k.kind == r.Kind {
			return k.label
		}
	}
	return ""
}
