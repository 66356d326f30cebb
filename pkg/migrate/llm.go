package migrate

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// llmKinds are KServe's LLM kinds, which Serval serves at v1alpha2 and
// migrates from v1alpha1 or v1alpha2.
var llmKinds = map[string]bool{"LLMInferenceService": true, "LLMInferenceServiceConfig": true}

// The prefixes of the well-known presets' names: KServe's, and Serval's
// (presets.Prefix, which a test checks; the CLI does not link the
// controller).
const (
	kservePresetPrefix = "kserve-config-llm-"
	servalPresetPrefix = "serval-"
)

// migrateLLM converts an LLM document to serving.serval.dev/v1alpha2: from
// v1alpha1 as KServe's conversion does (model criticality dropped, the
// InferencePool spec of the Inference Extension's v1alpha2 turned into its
// v1), the well-known presets' names to Serval's, and reports what Serval
// does not implement.
func migrateLLM(version string, obj *yaml.Node) []finding {
	var out []finding
	spec := lookup(obj, "spec")
	if version == "v1alpha1" {
		out = append(out, finding{path: "apiVersion", msg: "converted from v1alpha1 to v1alpha2, as KServe converts it"})
		out = append(out, fromV1alpha1(spec)...)
	}
	return append(out, renamePresets(obj, spec)...)
}

// fromV1alpha1 converts what KServe's v1alpha1 has and v1alpha2 has not.
func fromV1alpha1(spec *yaml.Node) []finding {
	var out []finding
	model := lookup(spec, "model")
	if deleteKey(model, "criticality") {
		out = append(out, finding{path: "spec.model.criticality", msg: "v1alpha2 has no criticality; it is dropped"})
	}
	if adapters := lookup(lookup(model, "lora"), "adapters"); adapters != nil && adapters.Kind == yaml.SequenceNode {
		for _, a := range adapters.Content {
			if deleteKey(a, "criticality") {
				out = append(out, finding{path: "spec.model.lora.adapters", msg: "v1alpha2 has no criticality; it is dropped"})
			}
		}
	}
	pool := lookup(lookup(lookup(lookup(spec, "router"), "scheduler"), "pool"), "spec")
	if pool == nil || pool.Kind != yaml.MappingNode {
		return out
	}
	// The Inference Extension's v1alpha2 pool: selector is a label map,
	// targetPortNumber a number, extensionRef the picker.
	if sel := lookup(pool, "selector"); sel != nil && sel.Kind == yaml.MappingNode && lookup(sel, "matchLabels") == nil {
		labels := *sel
		*sel = yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar("matchLabels"), &labels}}
	}
	if renameKey(pool, "targetPortNumber", "targetPorts") {
		port := lookup(pool, "targetPorts")
		number := *port
		*port = yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar("number"), &number}}}}
	}
	if renameKey(pool, "extensionRef", "endpointPickerRef") {
		ref := lookup(pool, "endpointPickerRef")
		if renameKey(ref, "portNumber", "port") {
			port := lookup(ref, "port")
			number := *port
			*port = yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar("number"), &number}}
		}
	}
	out = append(out, finding{path: "spec.router.scheduler.pool.spec", msg: "converted from the Inference Extension's v1alpha2 InferencePool to v1 " +
		"(selector.matchLabels, targetPorts, endpointPickerRef)"})
	return out
}

// renamePresets renames KServe's well-known presets to Serval's: a
// preset's own name, and the baseRefs that name one.
func renamePresets(obj, spec *yaml.Node) []finding {
	var out []finding
	rename := func(n *yaml.Node, path string) {
		if n != nil && n.Kind == yaml.ScalarNode && strings.HasPrefix(n.Value, kservePresetPrefix) {
			was := n.Value
			n.Value = servalPresetPrefix + strings.TrimPrefix(n.Value, "kserve-")
			out = append(out, finding{path: path, msg: "KServe's preset " + was + " is Serval's " + n.Value})
		}
	}
	rename(lookup(lookup(obj, "metadata"), "name"), "metadata.name")
	if refs := lookup(spec, "baseRefs"); refs != nil && refs.Kind == yaml.SequenceNode {
		for _, r := range refs.Content {
			rename(lookup(r, "name"), "spec.baseRefs")
		}
	}
	return out
}

func scalar(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

// deleteKey removes key from a mapping node, reporting whether it was there.
func deleteKey(m *yaml.Node, key string) bool {
	if m == nil || m.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return true
		}
	}
	return false
}

// renameKey renames a key of a mapping node, reporting whether it was there.
func renameKey(m *yaml.Node, from, to string) bool {
	if m == nil || m.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == from {
			m.Content[i].Value = to
			return true
		}
	}
	return false
}
