package v1alpha1

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// MaxGraphBytes bounds a graph's nodes, as JSON. The router gets the graph,
// its InferenceServices resolved to URLs, as one command-line argument,
// which Linux caps at 128 KiB (MAX_ARG_STRLEN): a larger one would leave
// the router's container unable to start. Half of it leaves room for the
// URLs.
const MaxGraphBytes = 64 << 10

// ValidateInferenceGraph checks an InferenceGraph as admission does: its
// size, its name (the router's Deployment and Service take it), its
// deployment mode, its scaling, its graph, and what one request may cost
// in it (limits; a zero limit is not checked).
func ValidateInferenceGraph(ig *InferenceGraph, limits GraphLimits) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1035Label(ig.Name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), ig.Name, "names the router's Deployment and Service: "+msg))
	}
	if v, ok := ig.Annotations[v1beta1.DeploymentModeAnnotation]; ok {
		if _, ok := v1beta1.NormalizeDeploymentMode(v); !ok {
			errs = append(errs, field.NotSupported(field.NewPath("metadata", "annotations").Key(v1beta1.DeploymentModeAnnotation), v,
				[]string{string(v1beta1.Standard), string(v1beta1.Knative), "RawDeployment", "Serverless"}))
		}
	}
	spec := field.NewPath("spec")
	if data, err := json.Marshal(ig.Spec.Nodes); err == nil && len(data) > MaxGraphBytes {
		// Checked first, and alone: nothing else of a graph this size is
		// worth the webhook's time.
		return append(errs, field.Invalid(spec.Child("nodes"), field.OmitValueType{}, fmt.Sprintf(
			"the nodes are %d bytes as JSON; the limit is %d: the router receives the graph as one command-line argument, which Linux caps at 128 KiB",
			len(data), MaxGraphBytes)))
	}
	if ig.Spec.MinReplicas != nil && ig.Spec.MaxReplicas > 0 && *ig.Spec.MinReplicas > ig.Spec.MaxReplicas {
		errs = append(errs, field.Invalid(spec.Child("minReplicas"), *ig.Spec.MinReplicas,
			fmt.Sprintf("must not exceed maxReplicas (%d)", ig.Spec.MaxReplicas)))
	}
	for _, name := range SortedNodeNames(ig.Spec.Nodes) {
		for i, s := range ig.Spec.Nodes[name].Steps {
			if s.ServiceName == "" {
				continue
			}
			for _, msg := range validation.IsDNS1123Label(s.ServiceName) {
				errs = append(errs, &field.Error{Type: field.ErrorTypeInvalid, Field: fmt.Sprintf("spec.nodes.%s.steps[%d].serviceName", name, i),
					BadValue: s.ServiceName, Detail: "names an InferenceService: " + msg})
			}
		}
	}
	for _, p := range append(ValidateGraph(&ig.Spec), ValidateGraphLimits(&ig.Spec, limits)...) {
		errs = append(errs, &field.Error{Type: field.ErrorTypeInvalid, Field: p.Path, BadValue: field.OmitValueType{}, Detail: p.Detail})
	}
	return errs
}

// GraphDeploymentMode is the mode a graph's router runs in: its
// annotation, normalised, or def.
func GraphDeploymentMode(ig metav1.Object, def v1beta1.DeploymentMode) v1beta1.DeploymentMode {
	if mode, ok := v1beta1.NormalizeDeploymentMode(ig.GetAnnotations()[v1beta1.DeploymentModeAnnotation]); ok {
		return mode
	}
	return def
}
