package presets

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"knative.dev/pkg/kmeta"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/strtemplate"
)

// Global is what templates read of Serval's configuration
// (.GlobalConfig), KServe's names.
type Global struct {
	// SystemNamespace is Serval's namespace.
	SystemNamespace string
	// IngressGatewayName and IngressGatewayNamespace name the default
	// Gateway.
	IngressGatewayName, IngressGatewayNamespace string
	// EnableTLS serves the model and the picker over TLS.
	EnableTLS bool
	// ModelBasedRoutingHeaderName is the header a shared Gateway routes on
	// by model; "" turns model-based routing off.
	ModelBasedRoutingHeaderName string
	// TemplateLimits bound each render (serval-config templates.*).
	TemplateLimits strtemplate.Limits
}

// render renders the Go templates in spec's strings over the service, as
// KServe does: the data is the service itself (.ObjectMeta, .Spec, ...) and
// .GlobalConfig; the functions are ChildName, shutdownTimeout and
// kvTransferConfig; a missing key is an error. A command or args item that
// renders empty is dropped (see dropEmptyArgs).
//
// Unlike KServe, which renders the spec's JSON text as one template, each
// string is rendered alone and written back as a string by the encoder:
// whatever a template prints (a quote, a brace), it stays inside the
// string it was written in, so no output can add, remove or retype a field
// (an HTTPRoute spec written through a model name). The strings share one
// budget: together they may add limits.MaxOutputBytes to the spec.
func render(spec v1alpha2.LLMInferenceServiceSpec, data strtemplate.Data, name string, limits strtemplate.Limits) (v1alpha2.LLMInferenceServiceSpec, error) {
	rendered, err := renderStrings(spec, name, limits, func(t *strtemplate.Template) (string, error) { return t.Execute(data) })
	if err != nil {
		return spec, err
	}
	dropEmptyArgs(&spec, &rendered)
	return rendered, nil
}

// renderStrings renders every string of spec that holds a template action
// with execute, each parsed alone and within one budget of limits, and
// returns the spec with each string replaced by its output. An error names
// the field.
func renderStrings(spec v1alpha2.LLMInferenceServiceSpec, name string, limits strtemplate.Limits, execute func(*strtemplate.Template) (string, error)) (v1alpha2.LLMInferenceServiceSpec, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return spec, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers go back as they came
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return spec, err
	}
	budget := strtemplate.NewBudget(limits)
	doc, err = eachTemplate(field.NewPath("spec"), doc, func(path *field.Path, text string) (string, error) {
		t, err := strtemplate.ParseFuncs(name, text, functions)
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		out, err := execute(t.Within(budget))
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		return out, nil
	})
	if err != nil {
		return spec, err
	}
	if raw, err = json.Marshal(doc); err != nil {
		return spec, err
	}
	var rendered v1alpha2.LLMInferenceServiceSpec
	if err := json.Unmarshal(raw, &rendered); err != nil {
		// Only a value of its own type can fail here: a quantity or a
		// duration whose template rendered text that is not one.
		return spec, fmt.Errorf("a rendered value is not of its field's type: %w", err)
	}
	return rendered, nil
}

// eachTemplate replaces every string under v that holds a template action
// ("{{") with what render makes of it, and returns v. Map keys are not
// templates: KServe's presets write none, and a key rendered to another
// key's name would silently drop one of them.
func eachTemplate(path *field.Path, v any, render func(*field.Path, string) (string, error)) (any, error) {
	switch v := v.(type) {
	case string:
		if !strings.Contains(v, "{{") {
			return v, nil
		}
		return render(path, v)
	case []any:
		for i, item := range v {
			out, err := eachTemplate(path.Index(i), item, render)
			if err != nil {
				return nil, err
			}
			v[i] = out
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out, err := eachTemplate(path.Child(k), v[k], render)
			if err != nil {
				return nil, err
			}
			v[k] = out
		}
	}
	return v, nil
}

// templateData is what a preset's templates read: the service, as a Go
// template reads a struct (embedded fields promoted), and .GlobalConfig.
func templateData(svc *v1alpha2.LLMInferenceService, g Global, pool string) strtemplate.Data {
	d := toData(reflect.ValueOf(svc).Elem()).(strtemplate.Data)
	d["GlobalConfig"] = strtemplate.Data{
		"SystemNamespace": g.SystemNamespace, "IngressGatewayName": g.IngressGatewayName,
		"IngressGatewayNamespace": g.IngressGatewayNamespace, "EnableTLS": g.EnableTLS,
		"ModelBasedRoutingHeaderName": g.ModelBasedRoutingHeaderName,
		"InferencePoolNamespacedName": svc.Namespace + "/" + pool,
	}
	return d
}

var (
	quantityType  = reflect.TypeFor[resource.Quantity]()
	intOrString   = reflect.TypeFor[intstr.IntOrString]()
	timeType      = reflect.TypeFor[metav1.Time]()
	rawExtension  = reflect.TypeFor[runtime.RawExtension]()
	rawJSON       = reflect.TypeFor[apiextensionsv1.JSON]()
	stringMapType = reflect.TypeFor[map[string]string]()
)

// toData turns a Go value into what a template reads of it, the way
// text/template reads a struct: exported fields by their Go names,
// embedded structs' fields promoted, pointers followed (a nil one is
// strtemplate.Null), numbers as int or float64. Values with a text form of
// their own (quantities, int-or-strings, times, raw JSON) are that text.
// Only fields are read, never methods.
func toData(v reflect.Value) any {
	if v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return strtemplate.Null{}
		}
		return toData(v.Elem())
	}
	switch v.Type() {
	case quantityType:
		q := v.Interface().(resource.Quantity)
		return q.String()
	case intOrString:
		is := v.Interface().(intstr.IntOrString)
		return is.String()
	case timeType:
		return v.Interface().(metav1.Time).String()
	case rawExtension:
		return string(v.Interface().(runtime.RawExtension).Raw)
	case rawJSON:
		return string(v.Interface().(apiextensionsv1.JSON).Raw)
	case stringMapType:
		if v.IsNil() {
			return map[string]string{}
		}
		return v.Interface().(map[string]string)
	}
	switch v.Kind() {
	case reflect.Struct:
		d := strtemplate.Data{}
		addFields(d, v)
		return d
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return string(v.Bytes())
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = toData(v.Index(i))
		}
		return out
	case reflect.Map:
		d := strtemplate.Data{}
		for _, k := range v.MapKeys() {
			d[fmt.Sprint(k.Interface())] = toData(v.MapIndex(k))
		}
		return d
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(v.Int())
	case reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int(v.Uint())
	case reflect.Float32, reflect.Float64:
		return v.Float()
	}
	return fmt.Sprint(v.Interface())
}

// addFields adds a struct's exported fields to d; an embedded struct's
// fields are promoted (a field of the outer struct wins), and the embedded
// struct is also there by its type's name.
func addFields(d strtemplate.Data, v reflect.Value) {
	t := v.Type()
	var embedded []int
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		d[f.Name] = toData(v.Field(i))
		if f.Anonymous && (f.Type.Kind() == reflect.Struct) {
			embedded = append(embedded, i)
		}
	}
	for _, i := range embedded {
		inner := strtemplate.Data{}
		addFields(inner, v.Field(i))
		for k, val := range inner {
			if _, taken := d[k]; !taken {
				d[k] = val
			}
		}
	}
}

// functions are KServe's template functions.
var functions = strtemplate.Funcs{
	"ChildName": func(args []any) (any, error) {
		if len(args) != 2 {
			return nil, fmt.Errorf("wrong number of args for ChildName: want 2 got %d", len(args))
		}
		parent, ok1 := args[0].(string)
		suffix, ok2 := args[1].(string)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("ChildName takes two strings")
		}
		return kmeta.ChildName(parent, suffix), nil
	},
	// shutdownTimeout is vLLM's --shutdown-timeout for a pod template: its
	// grace period (60 s when unset) less the preStop sleep and a margin of
	// up to 5 s, at least 0.
	"shutdownTimeout": func(args []any) (any, error) {
		if len(args) != 2 {
			return nil, fmt.Errorf("wrong number of args for shutdownTimeout: want 2 got %d", len(args))
		}
		preStop, ok := args[1].(int)
		if !ok {
			return nil, fmt.Errorf("shutdownTimeout's second argument is the preStop seconds, a number")
		}
		grace := 60
		if pod, ok := args[0].(strtemplate.Data); ok {
			if g, ok := pod["TerminationGracePeriodSeconds"].(int); ok {
				grace = g
			}
		}
		return max(grace-preStop-min(5, grace), 0), nil
	},
	// kvTransferConfig is vLLM's --kv-transfer-config for KV cache
	// offloading, quoted for the bash scripts of KServe's presets as KServe
	// quotes it; empty when there is none. (Serval's presets pass it as
	// an argument of their own: see KVCacheOffloadingSpec.TransferConfig.)
	"kvTransferConfig": func(args []any) (any, error) {
		if len(args) != 1 {
			return nil, fmt.Errorf("wrong number of args for kvTransferConfig: want 1 got %d", len(args))
		}
		if _, none := args[0].(strtemplate.Null); none {
			return "", nil
		}
		kv, err := kvCacheOf(args[0])
		if err != nil {
			return nil, err
		}
		return "--kv-transfer-config '" + strings.ReplaceAll(kv.TransferConfig(), `"`, `\\\"`) + "'", nil
	},
}

// kvCacheOf reads a kvCacheOffloading spec back from what a template sees
// of it.
func kvCacheOf(v any) (*v1alpha2.KVCacheOffloadingSpec, error) {
	d, ok := v.(strtemplate.Data)
	if !ok {
		return nil, fmt.Errorf("kvTransferConfig takes a kvCacheOffloading spec")
	}
	cpu, _ := d["CPU"].(string)
	q, err := resource.ParseQuantity(cpu)
	if err != nil {
		return nil, fmt.Errorf("kvTransferConfig: the CPU memory %q: %w", cpu, err)
	}
	kv := &v1alpha2.KVCacheOffloadingSpec{CPU: q}
	kv.EvictionPolicy, _ = d["EvictionPolicy"].(string)
	tiers, _ := d["Secondary"].([]any)
	for _, t := range tiers {
		tier := v1alpha2.SecondaryTierSpec{}
		if td, ok := t.(strtemplate.Data); ok {
			if _, none := td["FileSystem"].(strtemplate.Null); !none && td["FileSystem"] != nil {
				tier.FileSystem = &v1alpha2.FileSystemTierSpec{}
			}
		}
		kv.Secondary = append(kv.Secondary, tier)
	}
	return kv, nil
}

// CheckString renders one string of svc's spec or of a preset alone, as
// admission does before it admits the object: the functions and data of a
// render (Serval's settings left empty), a missing key read as no value so
// that the rest still runs, within limits. Only a *strtemplate.LimitError
// matters to admission: the other failures depend on data a reconcile has
// and admission does not, and a reconcile reports them.
func CheckString(svc *v1alpha2.LLMInferenceService, text string, limits strtemplate.Limits) error {
	t, err := strtemplate.ParseFuncs(svc.Name, text, functions)
	if err != nil {
		return err
	}
	_, err = t.WithLimits(limits).ExecuteNoValue(checkData(svc))
	return err
}

// CheckSpec renders every string of svc's spec as a reconcile renders
// them, within one budget of limits, over what admission knows (see
// CheckString), and returns the rendered spec: admission's rules run on
// it, since it is what Serval applies.
func CheckSpec(svc *v1alpha2.LLMInferenceService, limits strtemplate.Limits) (v1alpha2.LLMInferenceServiceSpec, error) {
	data := checkData(svc)
	return renderStrings(svc.Spec, svc.Name, limits, func(t *strtemplate.Template) (string, error) { return t.ExecuteNoValue(data) })
}

// checkData is what admission renders a service's templates over: the
// service, and Serval's settings left empty.
func checkData(svc *v1alpha2.LLMInferenceService) strtemplate.Data {
	return templateData(svc, Global{}, PoolName(svc, svc.Spec.Router))
}
