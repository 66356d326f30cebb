package tolerant

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
)

// Decode decodes data into full, as the API machinery decodes (case-sensitive
// field names). When that fails, it decodes data into partial (a struct of
// the fields that always decode: type, metadata, status) and returns the
// problem, naming the field, as decodeErr. err is set only when even partial
// does not decode: then the data is not an object of the kind at all.
// full and partial must be pointers to zero values.
func Decode(data []byte, full, partial any) (decodeErr string, err error) {
	fullErr := sigsjson.UnmarshalCaseSensitivePreserveInts(data, full)
	if fullErr == nil {
		return "", nil
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, partial); err != nil {
		return "", err
	}
	path, cause := Locate(data, reflect.TypeOf(full), "")
	if cause == nil {
		path, cause = "", fullErr
	}
	return describe(path, cause), nil
}

// describe is the message for a value that does not decode, in plain
// words where the decoder's are Go's ("cannot unmarshal string into Go
// value of type int32" says "must be a whole number, not a string").
func describe(path string, err error) string {
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if m := typeMismatch.FindStringSubmatch(msg); m != nil {
		msg = "must be " + expected(m[2]) + ", not " + article(m[1])
	}
	if path == "" {
		return msg
	}
	return path + ": " + msg
}

// Explain says in plain words why encoding/json (or sigs.k8s.io/json)
// could not decode a value: a value of the wrong type is named by its
// field and said as what it must be ("maxBatchSize: must be a whole
// number, not a string"); any other problem keeps the decoder's words.
func Explain(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Type != nil {
		msg := "must be " + expected(typeErr.Type.String()) + ", not " + article(typeErr.Value)
		if typeErr.Field != "" {
			return typeErr.Field + ": " + msg
		}
		return msg
	}
	return describe("", err)
}

// typeMismatch is the decoder's message for a JSON value of the wrong
// type: what was found, and the Go type it should have decoded into.
var typeMismatch = regexp.MustCompile(`^cannot unmarshal (\w+) into Go (?:value|struct field \S+) of type (\S+)$`)

// expected says in words what a Go type takes in JSON.
func expected(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["):
		return "an object (key: value pairs)"
	}
	switch strings.TrimPrefix(goType, "*") {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number"
	case "float32", "float64":
		return "a number"
	}
	return "an object (" + goType + ")"
}

// article names a JSON value's kind with its article: "a string", "an
// array".
func article(kind string) string {
	switch kind {
	case "array":
		return "a list"
	case "object":
		return "an object"
	}
	return "a " + kind
}

// Locate returns the path of the innermost value of data that does not decode
// into t, and why; "" and nil when data decodes. Paths are written as field
// paths are in Kubernetes messages (spec.containers[0].ports[1].containerPort).
func Locate(data []byte, t reflect.Type, path string) (string, error) {
	err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, reflect.New(t).Interface())
	if err == nil {
		return "", nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return path, err // a leaf with its own syntax (a quantity, say)
	}
	switch t.Kind() {
	case reflect.Struct:
		var raw map[string]json.RawMessage
		if json.Unmarshal(data, &raw) == nil {
			for _, f := range Fields(t) {
				if v, ok := raw[f.Name]; ok {
					if p, e := Locate(v, f.Type, join(path, f.Name)); e != nil {
						return p, e
					}
				}
			}
		}
	case reflect.Slice:
		var raw []json.RawMessage
		if json.Unmarshal(data, &raw) == nil {
			for i, v := range raw {
				if p, e := Locate(v, t.Elem(), path+"["+strconv.Itoa(i)+"]"); e != nil {
					return p, e
				}
			}
		}
	case reflect.Map:
		var raw map[string]json.RawMessage
		if json.Unmarshal(data, &raw) == nil {
			for _, k := range slices.Sorted(maps.Keys(raw)) {
				if p, e := Locate(raw[k], t.Elem(), join(path, k)); e != nil {
					return p, e
				}
			}
		}
	}
	return path, err
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Field is a JSON field of a struct.
type Field struct {
	// Name is the field's JSON name.
	Name string
	// Type is the field's Go type.
	Type reflect.Type
}

// Fields lists a struct's JSON fields in name order, flattening inline and
// embedded structs as encoding/json does.
func Fields(t reflect.Type) []Field {
	var out []Field
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ((name == "" && f.Anonymous) || strings.Contains(","+opts+",", ",inline,")) {
			out = append(out, Fields(ft)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, Field{Name: name, Type: f.Type})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// DecodeStrict decodes a schemaless field's JSON into into, refusing
// unknown fields, and says in plain words why it does not decode, naming
// the innermost value below the field that does not
// (metrics[0].resource.target.averageUtilization).
func DecodeStrict(data []byte, into any) error {
	err := DecodeStrictly(data, into)
	if err == nil {
		return nil
	}
	t := reflect.TypeOf(into)
	if path := unknownField(data, t, ""); path != "" {
		return errors.New("does not decode: " + path + ": unknown field; check its spelling and indentation")
	}
	if path, cause := Locate(data, t, ""); cause != nil && path != "" {
		return errors.New("does not decode: " + describe(path, cause))
	}
	return errors.New("does not decode: " + Explain(err))
}

// unknownField is the path of the first field of data, in name order,
// that t has no field for; "" when every field is known.
func unknownField(data []byte, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return ""
	}
	switch t.Kind() {
	case reflect.Struct:
		var raw map[string]json.RawMessage
		if json.Unmarshal(data, &raw) != nil {
			return ""
		}
		known := map[string]reflect.Type{}
		for _, f := range Fields(t) {
			known[f.Name] = f.Type
		}
		for _, k := range slices.Sorted(maps.Keys(raw)) {
			ft, ok := known[k]
			if !ok {
				return join(path, k)
			}
			if p := unknownField(raw[k], ft, join(path, k)); p != "" {
				return p
			}
		}
	case reflect.Slice:
		var raw []json.RawMessage
		if json.Unmarshal(data, &raw) == nil {
			for i, v := range raw {
				if p := unknownField(v, t.Elem(), path+"["+strconv.Itoa(i)+"]"); p != "" {
					return p
				}
			}
		}
	case reflect.Map:
		var raw map[string]json.RawMessage
		if json.Unmarshal(data, &raw) == nil {
			for _, k := range slices.Sorted(maps.Keys(raw)) {
				if p := unknownField(raw[k], t.Elem(), join(path, k)); p != "" {
					return p
				}
			}
		}
	}
	return ""
}

// DecodeStrictly decodes data refusing unknown fields, with the decoder's
// own error.
func DecodeStrictly(data []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

// head is what always decodes of a Serval object: its type, metadata and
// status (S; struct{} for a kind without one). Unexported: the CRD
// generator would take an exported struct of TypeMeta and ObjectMeta for a
// kind.
type head[S any] struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Status            S `json:"status,omitempty"`
}

// DecodeObject is the UnmarshalJSON of a kind whose stored spec may not
// decode (its pod fields are schemaless in the CRD): F is the kind's type
// without its UnmarshalJSON. When data decodes, decoded receives it; else
// undecodable receives what always decodes (type, metadata, status) and
// the problem (see Decode), so that one bad object never stops a list of
// its kind from decoding. Only data that is not an object of the kind at
// all is an error.
func DecodeObject[F, S any](data []byte, decoded func(*F), undecodable func(metav1.TypeMeta, metav1.ObjectMeta, S, string)) error {
	var full F
	var h head[S]
	problem, err := Decode(data, &full, &h)
	switch {
	case err != nil:
		return err
	case problem == "":
		decoded(&full)
	default:
		undecodable(h.TypeMeta, h.ObjectMeta, h.Status, problem)
	}
	return nil
}
