package v1beta1

// ChildName is the name of a component's Deployment, Service, HPA and Knative
// Service: {isvc}-{component}.
func ChildName(isvcName string, component ComponentType) string {
	return isvcName + "-" + string(component)
}

// Components returns the component types the spec defines, predictor first.
func (s *InferenceServiceSpec) Components() []ComponentType {
	components := []ComponentType{PredictorComponent}
	if s.Transformer != nil {
		components = append(components, TransformerComponent)
	}
	if s.Explainer != nil {
		components = append(components, ExplainerComponent)
	}
	return components
}

// Extension returns the shared scaling and metadata fields of a component, or
// nil when the spec has no such component.
func (s *InferenceServiceSpec) Extension(component ComponentType) *ComponentExtensionSpec {
	switch component {
	case PredictorComponent:
		return &s.Predictor.ComponentExtensionSpec
	case TransformerComponent:
		if s.Transformer != nil {
			return &s.Transformer.ComponentExtensionSpec
		}
	case ExplainerComponent:
		if s.Explainer != nil {
			return &s.Explainer.ComponentExtensionSpec
		}
	}
	return nil
}

// Pod returns the pod fields of a component, or nil when the spec has no such
// component.
func (s *InferenceServiceSpec) Pod(component ComponentType) *PodSpec {
	switch component {
	case PredictorComponent:
		return &s.Predictor.PodSpec
	case TransformerComponent:
		if s.Transformer != nil {
			return &s.Transformer.PodSpec
		}
	case ExplainerComponent:
		if s.Explainer != nil {
			return &s.Explainer.PodSpec
		}
	}
	return nil
}

// frameworkKey is a legacy predictor key and the field that holds it.
type frameworkKey struct {
	name string
	spec **PredictorExtensionSpec
}

// frameworks lists the legacy framework keys of p in a fixed order.
func (p *PredictorSpec) frameworks() []frameworkKey {
	return []frameworkKey{
		{"sklearn", &p.SKLearn}, {"xgboost", &p.XGBoost}, {"lightgbm", &p.LightGBM},
		{"tensorflow", &p.Tensorflow}, {"pytorch", &p.PyTorch}, {"triton", &p.Triton},
		{"onnx", &p.ONNX}, {"huggingface", &p.HuggingFace}, {"pmml", &p.PMML}, {"paddle", &p.Paddle},
	}
}

// Implementations returns the names of the predictor implementations that are
// set: "model", legacy framework keys, or "containers" for a custom predictor
// (only when neither of the others is set: with a model, containers are extra
// containers next to the model server).
func (p *PredictorSpec) Implementations() []string {
	var set []string
	if p.Model != nil {
		set = append(set, "model")
	}
	for _, f := range p.frameworks() {
		if *f.spec != nil {
			set = append(set, f.name)
		}
	}
	if len(set) == 0 && len(p.Containers) > 0 {
		set = append(set, "containers")
	}
	return set
}

// IsCustom reports whether the predictor is custom containers with no model.
func (p *PredictorSpec) IsCustom() bool {
	impl := p.Implementations()
	return len(impl) == 1 && impl[0] == "containers"
}
