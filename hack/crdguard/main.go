// Command crdguard types the schemaless parts of Serval's generated CRDs just
// enough that every stored object decodes.
//
// Serval's CRDs keep the pod and container subtrees schemaless to stay under
// the 200 KiB that client-side `kubectl apply` can store. The API server then
// stores whatever those subtrees hold, and one value Go cannot decode, such as
// `cpu: lots` or `containerPort: "8080"`, used to make every list of the kind
// fail. crdguard replaces each schemaless subtree that has a Kubernetes Go
// type with that type's decode guard (see guard): numbers, booleans,
// quantities and int-or-strings typed, everything else preserved as written,
// no descriptions. `make manifests` runs it after controller-gen.
//
// Usage: crdguard FILE...   (rewrites each CRD file in place)
package main

import (
	"bytes"
	"fmt"
	"os"
	"reflect"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/pkg/apis/serving/tolerant"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// roots are the Go types of the kinds whose CRDs are guarded.
var roots = map[string]reflect.Type{
	"InferenceService":          reflect.TypeFor[v1beta1.InferenceService](),
	"ServingRuntime":            reflect.TypeFor[v1alpha1.ServingRuntime](),
	"ClusterServingRuntime":     reflect.TypeFor[v1alpha1.ClusterServingRuntime](),
	"InferenceGraph":            reflect.TypeFor[v1alpha1.InferenceGraph](),
	"LLMInferenceService":       reflect.TypeFor[v1alpha2.LLMInferenceService](),
	"LLMInferenceServiceConfig": reflect.TypeFor[v1alpha2.LLMInferenceServiceConfig](),
	"ClusterStorageContainer":   reflect.TypeFor[v1alpha1.ClusterStorageContainer](),
	"LocalModelNodeGroup":       reflect.TypeFor[v1alpha1.LocalModelNodeGroup](),
	"LocalModelCache":           reflect.TypeFor[v1alpha1.LocalModelCache](),
	"LocalModelNamespaceCache":  reflect.TypeFor[v1alpha1.LocalModelNamespaceCache](),
	"LocalModelNode":            reflect.TypeFor[v1alpha1.LocalModelNode](),
}

func main() {
	for _, path := range os.Args[1:] {
		if err := guardFile(path); err != nil {
			fmt.Fprintf(os.Stderr, "crdguard: %s: %v\n", path, err)
			os.Exit(1)
		}
	}
}

func guardFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return err
	}
	root, ok := roots[crd.Spec.Names.Kind]
	if !ok {
		return fmt.Errorf("no Go type registered for kind %s", crd.Spec.Names.Kind)
	}
	for i := range crd.Spec.Versions {
		if s := crd.Spec.Versions[i].Schema; s != nil && s.OpenAPIV3Schema != nil {
			walk(s.OpenAPIV3Schema, root)
		}
	}
	out, err := yaml.Marshal(crd)
	if err != nil {
		return err
	}
	out = append([]byte("---\n"), bytes.TrimSpace(out)...)
	return os.WriteFile(path, append(out, '\n'), 0o644)
}

// walk follows the schema and the Go type together and guards each schemaless
// node that stands for a Kubernetes type.
func walk(s *apiextensionsv1.JSONSchemaProps, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if schemaless(s) {
		if t == jsonType {
			return // a KServe field Serval keeps as raw JSON on purpose
		}
		if g := guard(t); g != nil {
			g.Description = s.Description
			*s = *g
		}
		return
	}
	switch {
	case t == quantityType || t == intOrStringType || t == timeType:
		// Typed by controller-gen already; custom JSON, no fields to follow.
	case t.Kind() == reflect.Struct:
		for _, f := range tolerant.Fields(t) {
			if p, ok := s.Properties[f.Name]; ok {
				walk(&p, f.Type)
				s.Properties[f.Name] = p
			}
		}
	case t.Kind() == reflect.Slice:
		if s.Items != nil && s.Items.Schema != nil {
			walk(s.Items.Schema, t.Elem())
		}
	case t.Kind() == reflect.Map:
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			walk(s.AdditionalProperties.Schema, t.Elem())
		}
	}
}

// schemaless reports whether controller-gen left the node untyped.
func schemaless(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields && s.Type == "" &&
		len(s.Properties) == 0 && len(s.AnyOf) == 0 && !s.XIntOrString
}
