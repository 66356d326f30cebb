package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/config/crd"
)

// schemas are the validators of Serval's CRDs' OpenAPI schemas, by
// apiVersion and kind, made once from the CRD files the binary carries.
var schemas = sync.OnceValues(func() (map[string]*validate.SchemaValidator, error) {
	files, err := fs.Glob(crd.Bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	out := map[string]*validate.SchemaValidator{}
	for _, name := range files {
		data, err := crd.Bases.ReadFile(name)
		if err != nil {
			return nil, err
		}
		def := &apiextensionsv1.CustomResourceDefinition{}
		if err := sigsyaml.Unmarshal(data, def); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, v := range def.Spec.Versions {
			if v.Schema == nil {
				continue
			}
			// A CRD's schema is OpenAPI v3's, with Kubernetes' extensions
			// (which the validator passes over).
			raw, err := json.Marshal(v.Schema.OpenAPIV3Schema)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", name, v.Name, err)
			}
			schema := &spec.Schema{}
			if err := json.Unmarshal(raw, schema); err != nil {
				return nil, fmt.Errorf("%s %s: %w", name, v.Name, err)
			}
			out[def.Spec.Group+"/"+v.Name+"/"+def.Spec.Names.Kind] = validate.NewSchemaValidator(schema, nil, "", strfmt.Default)
		}
	}
	return out, nil
})

// schemaFindings are what the API server's check of the CRD's schema
// (types, minimums, enums, required fields) refuses of a converted
// document: what admission's webhook does not check because the API
// server already does, before the webhook is called.
func schemaFindings(doc []byte) []finding {
	var obj map[string]any
	if err := sigsyaml.Unmarshal(doc, &obj); err != nil {
		return nil // the webhook's own decoding reports it
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	all, err := schemas()
	if err != nil {
		return []finding{{msg: "Serval's CRDs do not load: " + err.Error(), blocking: true}}
	}
	validator, ok := all[apiVersion+"/"+kind]
	if !ok {
		return nil
	}
	var out []finding
	for _, err := range validator.Validate(obj).Errors {
		path := ""
		var v *openapierrors.Validation
		if errors.As(err, &v) {
			path = strings.TrimPrefix(v.Name, ".")
		}
		out = append(out, finding{path: path, msg: err.Error() + ": rejected by the API server (the " + kind + " CRD's schema)", blocking: true})
	}
	return out
}
