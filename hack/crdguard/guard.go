package main

import (
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/serval-dev/serval/pkg/apis/serving/tolerant"
)

// quantityPattern is the pattern controller-gen gives resource.Quantity: the
// syntax resource.ParseQuantity accepts.
const quantityPattern = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`

var (
	quantityType    = reflect.TypeFor[resource.Quantity]()
	intOrStringType = reflect.TypeFor[intstr.IntOrString]()
	timeType        = reflect.TypeFor[metav1.Time]()
	jsonType        = reflect.TypeFor[apiextensionsv1.JSON]()
	bytesType       = reflect.TypeFor[[]byte]()
)

// guardedTypes are the types whose values most often fail to decode: resource
// quantities, ports, probe counts and ports, rollout percents. Each is typed
// in full by its guard.
var guardedTypes = map[reflect.Type]bool{
	reflect.TypeFor[corev1.ContainerPort]():         true,
	reflect.TypeFor[corev1.ResourceRequirements]():  true,
	reflect.TypeFor[corev1.Probe]():                 true,
	reflect.TypeFor[appsv1.DeploymentStrategy]():    true,
	reflect.TypeFor[corev1.ContainerResizePolicy](): true,
}

// containerType is guarded in part: only its fields of guardedTypes. Typing a
// whole Container (and every Volume and Affinity) would take the
// InferenceService CRD, which embeds 17 containers, over its 200 KiB budget;
// the manager tolerates the rarer mistakes elsewhere.
var containerType = reflect.TypeFor[corev1.Container]()

// podSpecType is guarded in part too, where a kind keeps a whole pod
// template schemaless (an LLMInferenceService's): its containers, as
// above, and its numbers and booleans.
var podSpecType = reflect.TypeFor[corev1.PodSpec]()

// guard returns the decode guard of a Go type, or nil when the type is left
// schemaless: a schema that types every field whose value Go could fail to
// decode (numbers, booleans, quantities, int-or-strings, and the objects and
// lists around them) and preserves everything else as written, strings
// included. Only guardedTypes and containerType (and lists of them) get one.
func guard(t reflect.Type) *apiextensionsv1.JSONSchemaProps {
	base := t
	for base.Kind() == reflect.Pointer || base.Kind() == reflect.Slice {
		base = base.Elem()
	}
	if !guardedTypes[base] && base != containerType && base != podSpecType {
		return nil
	}
	return guardOf(t, map[reflect.Type]bool{})
}

func guardOf(t reflect.Type, visiting map[reflect.Type]bool) *apiextensionsv1.JSONSchemaProps {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case quantityType:
		return &apiextensionsv1.JSONSchemaProps{
			AnyOf:        []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}},
			Pattern:      quantityPattern,
			XIntOrString: true,
		}
	case intOrStringType:
		return &apiextensionsv1.JSONSchemaProps{
			AnyOf:        []apiextensionsv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}},
			XIntOrString: true,
		}
	case timeType, jsonType, bytesType:
		return nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return &apiextensionsv1.JSONSchemaProps{Type: "boolean"}
	case reflect.Int32, reflect.Uint16, reflect.Uint32:
		return &apiextensionsv1.JSONSchemaProps{Type: "integer", Format: "int32"}
	case reflect.Int, reflect.Int64, reflect.Uint64:
		return &apiextensionsv1.JSONSchemaProps{Type: "integer", Format: "int64"}
	case reflect.Float32, reflect.Float64:
		return &apiextensionsv1.JSONSchemaProps{Type: "number"}
	case reflect.Slice:
		items := guardOf(t.Elem(), visiting)
		if items == nil {
			items = &apiextensionsv1.JSONSchemaProps{XPreserveUnknownFields: ptrTrue()}
		}
		return &apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: items}}
	case reflect.Map:
		values := guardOf(t.Elem(), visiting)
		if values == nil {
			return nil
		}
		return &apiextensionsv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: values}}
	case reflect.Struct:
		return guardStruct(t, visiting)
	}
	return nil
}

// guardStruct guards a struct's fields; a struct is always typed as an object
// (a string where an object belongs does not decode either), and keeps the
// fields it does not type.
func guardStruct(t reflect.Type, visiting map[reflect.Type]bool) *apiextensionsv1.JSONSchemaProps {
	if visiting[t] {
		// A recursive type (JSONSchemaProps-like): stop at the object level.
		return &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTrue()}
	}
	visiting[t] = true
	defer delete(visiting, t)
	props := map[string]apiextensionsv1.JSONSchemaProps{}
	for _, f := range tolerant.Fields(t) {
		if t == containerType && guard(f.Type) == nil {
			continue // left as written: see containerType
		}
		if t == podSpecType && guard(f.Type) == nil && !scalar(f.Type) {
			continue // left as written: see podSpecType
		}
		if g := guardOf(f.Type, visiting); g != nil {
			props[f.Name] = *g
		}
	}
	s := &apiextensionsv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptrTrue()}
	if len(props) > 0 {
		s.Properties = props
	}
	return s
}

func ptrTrue() *bool { b := true; return &b }

// scalar reports whether t (or what it points to) is a number or a boolean.
func scalar(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}
