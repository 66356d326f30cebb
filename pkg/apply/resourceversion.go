package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sort"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// owned is the metadata Serval sets on an object: the keys of its labels and
// annotations. Only those count in the live version: others add their own
// (the deployment controller's revision annotation, say) and that must not
// cost a re-apply.
type owned struct {
	labels, annotations []string
}

// ownedOf reads the keys the desired object sets, from its encoded form.
func ownedOf(encoded []byte) owned {
	var obj struct {
		Metadata struct {
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(encoded, &obj) // encoded by the caller from an apply configuration
	return owned{labels: sortedKeys(obj.Metadata.Labels), annotations: append(sortedKeys(obj.Metadata.Annotations), HashAnnotation)}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// versionOf identifies the state of a live object for the skip cache. For an
// object with a generation it is the generation plus a digest of the
// metadata Serval owns there (its labels and annotations, by key, and the
// owner references): status updates, such as the controller-manager's on a
// Deployment, and metadata others add change none of it, so they cost no
// re-apply. An object without a generation falls back to its
// resourceVersion.
func versionOf(m metav1.Object, keys owned) string {
	if m.GetGeneration() == 0 {
		return "rv:" + m.GetResourceVersion()
	}
	pick := func(from map[string]string, keys []string) []string {
		out := make([]string, 0, 2*len(keys))
		for _, k := range keys {
			v, ok := from[k]
			out = append(out, k, strconv.FormatBool(ok)+v)
		}
		return out
	}
	data, _ := json.Marshal([]any{pick(m.GetLabels(), keys.labels), pick(m.GetAnnotations(), keys.annotations), m.GetOwnerReferences()}) // plain values always encode
	sum := sha256.Sum256(data)
	return "gen:" + strconv.FormatInt(m.GetGeneration(), 10) + ":" + hex.EncodeToString(sum[:8])
}

// appliedVersionOf reads the live version from an apply configuration.
// controller-runtime decodes the apply response into the configuration, so
// after Apply it holds the live object's metadata.
func appliedVersionOf(ac runtime.ApplyConfiguration, keys owned) (string, error) {
	data, err := json.Marshal(ac)
	if err != nil {
		return "", err
	}
	var obj struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(data, &obj); err != nil {
		return "", err
	}
	if obj.Metadata.ResourceVersion == "" {
		return "", errors.New("the apply response carries no resourceVersion")
	}
	return versionOf(&obj.Metadata, keys), nil
}
