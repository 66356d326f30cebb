package llmobjects

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha2"
	"github.com/serval-dev/serval/pkg/storage"
)

// The model's and the adapters' places in the pod.
const (
	modelMountPath = "/mnt/models"
	loraMountRoot  = "/mnt/lora"
)

var unsafePathChars = regexp.MustCompile(`[^a-zA-Z0-9._-]`)

// adapters are the model's LoRA adapters, sorted by name, each with the
// directory it appears in.
func adapters(spec *v1alpha2.LLMInferenceServiceSpec) []v1alpha2.LLMModelSpec {
	if spec.Model.LoRA == nil {
		return nil
	}
	out := slices.Clone(spec.Model.LoRA.Adapters)
	slices.SortFunc(out, func(a, b v1alpha2.LLMModelSpec) int {
		return strings.Compare(ptr.Deref(a.Name, ""), ptr.Deref(b.Name, ""))
	})
	return out
}

// adapterPath is where an adapter appears: a directory of /mnt/lora named
// after it (characters a path cannot take replaced).
func adapterPath(name string) string {
	segment := unsafePathChars.ReplaceAllString(name, "-")
	if segment == "" || segment == "." || segment == ".." {
		segment = "adapter"
	}
	return path.Join(loraMountRoot, segment)
}

// modelEntries are the model at /mnt/models and each adapter at its
// directory, for one storage initializer to download (or a claim to mount).
func modelEntries(spec *v1alpha2.LLMInferenceServiceSpec) ([]storage.Entry, error) {
	model, err := storage.Parse(spec.Model.URI)
	if err != nil {
		return nil, err
	}
	if model.Kind == storage.OCI {
		return nil, fmt.Errorf("a model stored as an OCI image (%s) cannot be served with LoRA adapters: use hf://, s3:// or pvc:// for it", spec.Model.URI)
	}
	entries := []storage.Entry{{Location: model, MountPath: modelMountPath}}
	for _, a := range adapters(spec) {
		loc, err := storage.Parse(a.URI)
		if err != nil {
			return nil, fmt.Errorf("LoRA adapter %s: %w", ptr.Deref(a.Name, ""), err)
		}
		entries = append(entries, storage.Entry{Location: loc, MountPath: adapterPath(ptr.Deref(a.Name, ""))})
	}
	return entries, nil
}

// addLoRAArgs turns vLLM's LoRA on with the adapters, each under its name
// and its publisher-qualified name, unless the container names its LoRA
// modules itself. The limits default to the number of adapters.
func addLoRAArgs(c *corev1.Container, spec *v1alpha2.LLMInferenceServiceSpec, namespace string) error {
	list := adapters(spec)
	if len(list) == 0 || slices.ContainsFunc(append(slices.Clone(c.Command), c.Args...), func(a string) bool { return strings.HasPrefix(a, "--lora-modules") }) {
		return nil
	}
	lora := spec.Model.LoRA
	args := []string{"--enable-lora"}
	if lora.MaxRank != nil {
		args = append(args, "--max-lora-rank", strconv.Itoa(int(*lora.MaxRank)))
	}
	args = append(args, "--max-loras", strconv.Itoa(int(ptr.Deref(lora.MaxAdapters, int32(len(list))))),
		"--max-cpu-loras", strconv.Itoa(int(ptr.Deref(lora.MaxCpuAdapters, int32(len(list))))), "--lora-modules")
	for _, a := range list {
		name := ptr.Deref(a.Name, "")
		for _, served := range []string{name, "publishers/" + namespace + "/models/" + name} {
			module, err := json.Marshal(struct {
				Name string `json:"name"`
				Path string `json:"path"`
			}{served, adapterPath(name)})
			if err != nil {
				return err
			}
			args = append(args, string(module))
		}
	}
	c.Args = append(c.Args, args...)
	return nil
}
