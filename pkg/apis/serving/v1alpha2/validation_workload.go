package v1alpha2

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateWorkloads checks the main workload and the prefill workload:
// parallelism, scaling and KV cache offloading, KServe's rules.
func validateWorkloads(s *LLMInferenceServiceSpec) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateWorkload(spec, &s.WorkloadSpec)
	if s.Prefill != nil {
		errs = append(errs, validateWorkload(spec.Child("prefill"), s.Prefill)...)
	}
	return errs
}

func validateWorkload(p *field.Path, w *WorkloadSpec) field.ErrorList {
	errs := validateParallelism(p.Child("parallelism"), w.Parallelism)
	errs = append(errs, validateScaling(p, w)...)
	errs = append(errs, validateKVCacheOffloading(p.Child("kvCacheOffloading"), w.KVCacheOffloading)...)
	return errs
}

// validateWorkerShape: a workload with a worker runs across nodes, so its
// parallelism must say how (data or pipeline). It holds of a service and of
// its combined spec, not of a preset, which may bring the worker while the
// service brings the parallelism.
func validateWorkerShape(s *LLMInferenceServiceSpec) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	check := func(p *field.Path, w *WorkloadSpec) {
		if w.Worker != nil && !w.Parallelism.IsDataParallel() && !w.Parallelism.IsPipelineParallel() {
			errs = append(errs, field.Invalid(p.Child("worker"), "set",
				"a worker runs each replica across nodes: set "+p.Child("parallelism").String()+" to data parallelism (data, dataLocal) or pipeline parallelism (pipeline)"))
		}
	}
	check(spec, &s.WorkloadSpec)
	if s.Prefill != nil {
		check(spec.Child("prefill"), s.Prefill)
	}
	return errs
}

// validateScaling: replicas or scaling, not both; minReplicas under
// maxReplicas; wva or keda, and under wva an hpa or a keda actuator;
// idleReplicaCount under minReplicas; KEDA's fields Serval sets itself
// left unset.
func validateScaling(p *field.Path, w *WorkloadSpec) field.ErrorList {
	s := w.Scaling
	if s == nil {
		return nil
	}
	sp := p.Child("scaling")
	var errs field.ErrorList
	if w.Replicas != nil {
		errs = append(errs, field.Invalid(sp, "set", fmt.Sprintf(
			"scaling and %s are mutually exclusive: the autoscaler sets the replicas; remove one", p.Child("replicas"))))
	}
	if s.MinReplicas != nil && *s.MinReplicas > s.MaxReplicas {
		errs = append(errs, field.Invalid(sp.Child("minReplicas"), *s.MinReplicas,
			fmt.Sprintf("minReplicas (%d) cannot exceed maxReplicas (%d)", *s.MinReplicas, s.MaxReplicas)))
	}
	switch {
	case s.WVA != nil && s.KEDA != nil:
		return append(errs, field.Invalid(sp, "wva and keda", "wva and keda are mutually exclusive: choose one"))
	case s.WVA == nil && s.KEDA == nil:
		return append(errs, field.Required(sp, "set wva (the Workload Variant Autoscaler) or keda (KEDA on your triggers)"))
	case s.KEDA != nil:
		kp := sp.Child("keda")
		if len(s.KEDA.Triggers) == 0 {
			errs = append(errs, field.Required(kp.Child("triggers"), "at least one trigger is required when KEDA scales on your triggers"))
		}
		for i, t := range s.KEDA.Triggers {
			if t.Type == "" {
				errs = append(errs, field.Required(kp.Child("triggers").Index(i).Child("type"), "the trigger's scaler (prometheus, cpu, memory...)"))
			}
		}
		errs = append(errs, validateKEDAFields(kp, &s.KEDA.KEDAScalingSpec, false)...)
		return append(errs, validateIdleReplicas(sp, kp, s, &s.KEDA.KEDAScalingSpec)...)
	}
	wp := sp.Child("wva")
	switch {
	case s.WVA.HPA != nil && s.WVA.KEDA != nil:
		errs = append(errs, field.Invalid(wp, "hpa and keda", "hpa and keda are mutually exclusive: choose one actuator"))
	case s.WVA.HPA == nil && s.WVA.KEDA == nil:
		errs = append(errs, field.Required(wp, "set the actuator: hpa or keda"))
	}
	if s.WVA.KEDA != nil {
		errs = append(errs, validateKEDAFields(wp.Child("keda"), s.WVA.KEDA, true)...)
		errs = append(errs, validateIdleReplicas(sp, wp.Child("keda"), s, s.WVA.KEDA)...)
	}
	return errs
}

// kedaAdvanced is what Serval reads of KEDA's advanced section.
type kedaAdvanced struct {
	HorizontalPodAutoscalerConfig *struct {
		Name string `json:"name"`
	} `json:"horizontalPodAutoscalerConfig"`
	ScalingModifiers *struct {
		Formula          string `json:"formula"`
		Target           string `json:"target"`
		ActivationTarget string `json:"activationTarget"`
		MetricType       string `json:"metricType"`
	} `json:"scalingModifiers"`
}

// validateKEDAFields: the HPA KEDA makes is named by Serval, and under WVA
// the scaling formula is WVA's.
func validateKEDAFields(p *field.Path, k *KEDAScalingSpec, wva bool) field.ErrorList {
	if k.Advanced == nil || len(k.Advanced.Raw) == 0 {
		return nil
	}
	var adv kedaAdvanced
	if err := json.Unmarshal(k.Advanced.Raw, &adv); err != nil {
		return field.ErrorList{field.Invalid(p.Child("advanced"), string(k.Advanced.Raw), "not KEDA's advanced section: "+err.Error())}
	}
	var errs field.ErrorList
	if adv.HorizontalPodAutoscalerConfig != nil && adv.HorizontalPodAutoscalerConfig.Name != "" {
		errs = append(errs, field.Forbidden(p.Child("advanced", "horizontalPodAutoscalerConfig", "name"),
			"Serval names the HPA KEDA makes: remove the name"))
	}
	if sm := adv.ScalingModifiers; wva && sm != nil && (sm.Formula != "" || sm.Target != "" || sm.ActivationTarget != "" || sm.MetricType != "") {
		errs = append(errs, field.Forbidden(p.Child("advanced", "scalingModifiers"),
			"the Workload Variant Autoscaler computes the replicas: remove scalingModifiers"))
	}
	return errs
}

// validateIdleReplicas: idleReplicaCount is the count below minReplicas
// when nothing is active, so minReplicas must be set and above it.
func validateIdleReplicas(sp, kp *field.Path, s *ScalingSpec, k *KEDAScalingSpec) field.ErrorList {
	if k.IdleReplicaCount == nil {
		return nil
	}
	idle := *k.IdleReplicaCount
	if s.MinReplicas == nil {
		return field.ErrorList{field.Required(sp.Child("minReplicas"), fmt.Sprintf(
			"minReplicas is required when idleReplicaCount is set, and must be above it (%d)", idle))}
	}
	if idle >= *s.MinReplicas {
		return field.ErrorList{field.Invalid(kp.Child("idleReplicaCount"), idle, fmt.Sprintf(
			"idleReplicaCount (%d) must be less than minReplicas (%d): it is the count when no trigger is active", idle, *s.MinReplicas))}
	}
	return nil
}

// validateKVCacheOffloading: CPU memory above zero, and each secondary
// tier exactly one volume.
func validateKVCacheOffloading(p *field.Path, kv *KVCacheOffloadingSpec) field.ErrorList {
	if kv == nil {
		return nil
	}
	var errs field.ErrorList
	if kv.CPU.Sign() <= 0 {
		errs = append(errs, field.Invalid(p.Child("cpu"), kv.CPU.String(), "the CPU memory for the KV cache must be above zero (\"10Gi\")"))
	}
	for i, t := range kv.Secondary {
		tp := p.Child("secondary").Index(i)
		if t.FileSystem == nil {
			errs = append(errs, field.Required(tp.Child("fileSystem"), "a secondary tier is a fileSystem tier"))
			continue
		}
		fs, fp := t.FileSystem, tp.Child("fileSystem")
		switch {
		case (fs.EmptyDir == nil) == (fs.PVC == nil):
			errs = append(errs, field.Invalid(fp, "emptyDir and pvc", "set exactly one of emptyDir and pvc"))
		case fs.EmptyDir != nil && fs.EmptyDir.Size.Sign() <= 0:
			errs = append(errs, field.Invalid(fp.Child("emptyDir", "size"), fs.EmptyDir.Size.String(), "the tier's size must be above zero"))
		case fs.PVC != nil && (fs.PVC.Spec == nil) == (fs.PVC.Ref == nil):
			errs = append(errs, field.Invalid(fp.Child("pvc"), "spec and ref", "set exactly one of spec (a claim per pod) and ref (your claim)"))
		case fs.PVC != nil && fs.PVC.Ref != nil && fs.PVC.Ref.Name == "":
			errs = append(errs, field.Required(fp.Child("pvc", "ref", "name"), "the claim's name"))
		}
	}
	return errs
}
