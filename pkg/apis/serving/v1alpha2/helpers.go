package v1alpha2

import (
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// IsPipelineParallel reports whether the workload splits the model's layers
// across nodes.
func (p *ParallelismSpec) IsPipelineParallel() bool {
	return p != nil && p.Pipeline != nil && *p.Pipeline > 0
}

// IsDataParallel reports whether the workload runs data-parallel ranks.
func (p *ParallelismSpec) IsDataParallel() bool {
	return p != nil && (p.Data != nil && *p.Data > 0 || p.DataLocal != nil && *p.DataLocal > 0)
}

// Size is the number of nodes a replica spans, KServe's "total parallelism
// size": data / dataLocal with data parallelism, pipeline with pipeline
// parallelism, else 1.
func (p *ParallelismSpec) Size() int32 {
	deref := func(v *int32) int32 {
		if v == nil || *v < 1 {
			return 1
		}
		return *v
	}
	switch {
	case p.IsDataParallel():
		return max(deref(p.Data)/deref(p.DataLocal), 1)
	case p.IsPipelineParallel():
		return *p.Pipeline
	}
	return 1
}

// hasTemplate reports whether s holds a Go template action, rendered when
// the presets are merged: it cannot be checked before.
func hasTemplate(s string) bool { return strings.Contains(s, "{{") }

// ModelName is the name requests use for the model: spec.model.name, else
// the service's name.
func (in *LLMInferenceService) ModelName() string {
	if n := in.Spec.Model.Name; n != nil && *n != "" {
		return *n
	}
	return in.Name
}

// HasRef reports whether the pool is the user's own (pool.ref names one).
func (p *InferencePoolSpec) HasRef() bool { return p != nil && p.Ref != nil && p.Ref.Name != "" }

// PluginTypes are the plugin types an inline EndpointPickerConfig lists;
// none when there is no inline config or it does not parse.
func (c *SchedulerConfigSpec) PluginTypes() map[string]bool {
	if c == nil || c.Inline == nil {
		return nil
	}
	var cfg struct {
		Plugins []struct {
			Type string `json:"type"`
		} `json:"plugins"`
	}
	if yaml.Unmarshal(c.Inline.Raw, &cfg) != nil {
		return nil
	}
	out := map[string]bool{}
	for _, p := range cfg.Plugins {
		out[p.Type] = true
	}
	return out
}

// TokenizerPlugins are the picker's plugins that need the standalone
// tokenizer.
var TokenizerPlugins = []string{"token-producer", "precise-prefix-cache-scorer"}

// RoutingGroup is the routing group of the service's route; "" when none.
func (r *RouterSpec) RoutingGroup() string {
	if r == nil || r.Route == nil || r.Route.Group == nil {
		return ""
	}
	return *r.Route.Group
}

// TransferConfig is vLLM's --kv-transfer-config for the offloading,
// KServe's: the OffloadingConnector with the CPU bytes, the eviction policy
// and a file system tier per secondary tier, on the volume mounted at
// KVTierPath.
func (kv *KVCacheOffloadingSpec) TransferConfig() string {
	extra := map[string]any{"spec_name": "TieringOffloadingSpec", "cpu_bytes_to_use": kv.CPU.Value()}
	if kv.EvictionPolicy != "" {
		extra["eviction_policy"] = kv.EvictionPolicy
	}
	var tiers []map[string]any
	for i, s := range kv.Secondary {
		if s.FileSystem != nil {
			tiers = append(tiers, map[string]any{"type": "fs", "root_dir": KVTierPath(i)})
		}
	}
	if len(tiers) > 0 {
		extra["secondary_tiers"] = tiers
	}
	// Maps marshal with sorted keys: the text is stable.
	b, _ := json.Marshal(map[string]any{"kv_connector": "OffloadingConnector", "kv_role": "kv_both", "kv_connector_extra_config": extra})
	return string(b)
}

// KVTierPath is where the i-th secondary KV cache tier is mounted.
func KVTierPath(i int) string { return fmt.Sprintf("/mnt/kv-cache-%d", i) }
