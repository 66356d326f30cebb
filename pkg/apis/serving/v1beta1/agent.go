package v1beta1

import (
	"net/url"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/serval-dev/serval/pkg/apis/serving/tolerant"
)

// LoggerSpec is KServe's request logger (spec.<component>.logger): the
// agent sidecar sends each request and response, as CloudEvents, to url.
// It is stored schemaless and decoded strictly here.
type LoggerSpec struct {
	// URL receives the events; serval-config's logger.defaultUrl when unset.
	URL *string `json:"url,omitempty"`
	// Mode is all (default), request or response.
	Mode LoggerType `json:"mode,omitempty"`
	// MetadataHeaders are request headers copied into the events.
	MetadataHeaders []string `json:"metadataHeaders,omitempty"`
	// MetadataAnnotations are InferenceService annotations copied into the
	// events.
	MetadataAnnotations []string `json:"metadataAnnotations,omitempty"`
	// Storage writes the events to a storage location instead of a URL.
	Storage *LoggerStorageSpec `json:"storage,omitempty"`
}

// LoggerType is what the logger logs.
type LoggerType string

// The logger modes.
const (
	LogAll      LoggerType = "all"
	LogRequest  LoggerType = "request"
	LogResponse LoggerType = "response"
)

// LoggerStorageSpec is where the logger writes events to storage.
type LoggerStorageSpec struct {
	Path       *string            `json:"path,omitempty"`
	Parameters *map[string]string `json:"parameters,omitempty"`
	Key        *string            `json:"key,omitempty"`
}

// Batcher is KServe's request batcher (spec.<component>.batcher): the
// agent sidecar gathers requests into batches for the model server.
type Batcher struct {
	// MaxBatchSize is the most requests in one batch (serval-config's
	// batcher.maxBatchSize when unset).
	MaxBatchSize *int `json:"maxBatchSize,omitempty"`
	// MaxLatency is the longest a request waits for its batch, in
	// milliseconds (batcher.maxLatency when unset).
	MaxLatency *int `json:"maxLatency,omitempty"`
	// Timeout is KServe's batch timeout, in seconds.
	Timeout *int `json:"timeout,omitempty"`
}

// LoggerOf decodes a component's logger strictly; nil when unset.
func LoggerOf(ext *ComponentExtensionSpec) (*LoggerSpec, error) {
	if ext.Logger == nil || len(ext.Logger.Raw) == 0 {
		return nil, nil
	}
	l := &LoggerSpec{}
	if err := decodeStrict(ext.Logger.Raw, l); err != nil {
		return nil, err
	}
	return l, nil
}

// BatcherOf decodes a component's batcher strictly; nil when unset.
func BatcherOf(ext *ComponentExtensionSpec) (*Batcher, error) {
	if ext.Batcher == nil || len(ext.Batcher.Raw) == 0 {
		return nil, nil
	}
	b := &Batcher{}
	if err := decodeStrict(ext.Batcher.Raw, b); err != nil {
		return nil, err
	}
	return b, nil
}

// decodeStrict decodes a schemaless field (logger, batcher, autoScaling,
// workerSpec) refusing unknown fields, and says in plain words why it does
// not decode.
func decodeStrict(raw []byte, into any) error { return tolerant.DecodeStrict(raw, into) }

// decodeStrictly decodes data refusing unknown fields, with the decoder's
// own error.
func decodeStrictly(data []byte, into any) error { return tolerant.DecodeStrictly(data, into) }

// validateAgent checks logger and batcher: they decode, with known modes,
// an absolute URL, positive sizes.
func validateAgent(ext *ComponentExtensionSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	logger, err := LoggerOf(ext)
	if err != nil {
		errs = append(errs, field.Invalid(path.Child("logger"), field.OmitValueType{}, err.Error()))
	}
	batcher, err := BatcherOf(ext)
	if err != nil {
		errs = append(errs, field.Invalid(path.Child("batcher"), field.OmitValueType{}, err.Error()))
	}
	if logger != nil {
		lp := path.Child("logger")
		switch logger.Mode {
		case "", LogAll, LogRequest, LogResponse:
		default:
			errs = append(errs, field.NotSupported(lp.Child("mode"), logger.Mode, []string{"all", "request", "response"}))
		}
		if logger.URL != nil {
			if u, err := url.Parse(*logger.URL); err != nil || u.Scheme == "" || u.Host == "" {
				errs = append(errs, field.Invalid(lp.Child("url"), *logger.URL, "not an absolute URL"))
			}
		}
		if logger.Storage != nil {
			errs = append(errs, notSupportedYet(lp.Child("storage")))
		}
	}
	if batcher != nil {
		bp := path.Child("batcher")
		for _, f := range []struct {
			name string
			v    *int
		}{{"maxBatchSize", batcher.MaxBatchSize}, {"maxLatency", batcher.MaxLatency}, {"timeout", batcher.Timeout}} {
			if f.v != nil && *f.v < 1 {
				errs = append(errs, field.Invalid(bp.Child(f.name), *f.v, "must be at least 1"))
			}
		}
	}
	return errs
}
