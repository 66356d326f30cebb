package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// versionOf identifies the state of a live object for the skip cache. For an
// object with a generation it is the generation plus a digest of the metadata
// others may change (labels, annotations, owner references): status updates,
// such as the controller-manager's on a Deployment, change neither, so they
// cost no re-apply. An object without a generation falls back to its
// resourceVersion.
func versionOf(m metav1.Object) string {
	if m.GetGeneration() == 0 {
		return "rv:" + m.GetResourceVersion()
	}
	data, _ := json.Marshal([]any{m.GetLabels(), m.GetAnnotations(), m.GetOwnerReferences()}) // plain maps and structs always encode
	sum := sha256.Sum256(data)
	return "gen:" + strconv.FormatInt(m.GetGeneration(), 10) + ":" + hex.EncodeToString(sum[:8])
}

// appliedVersionOf reads the live version from an apply configuration.
// controller-runtime decodes the apply response into the configuration, so
// after Apply it holds the live object's metadata.
func appliedVersionOf(ac runtime.ApplyConfiguration) (string, error) {
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
	return versionOf(&obj.Metadata), nil
}
