package llmobjects

import (
	"fmt"
	"slices"

	"sigs.k8s.io/yaml"
)

// The picker's plugins the standalone tokenizer concerns.
const (
	tokenProducerPlugin              = "token-producer"
	precisePrefixCacheScorerPlugin   = "precise-prefix-cache-scorer"
	precisePrefixCacheProducerPlugin = "precise-prefix-cache-producer"
	prefixCacheScorerPlugin          = "prefix-cache-scorer"
)

// wireTokenizer points an inline EndpointPickerConfig at the standalone
// tokenizer, as KServe does: each token-producer plugin gets the
// tokenizer's URL and model name unless it sets them, and the monolithic
// precise-prefix-cache-scorer (which tokenized in the picker itself) is
// replaced by the token-producer, precise-prefix-cache-producer and
// prefix-cache-scorer pipeline, keeping its parameters but the tokenizer
// pool's. The config is returned as YAML.
func wireTokenizer(config, url string) (string, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(config), &cfg); err != nil {
		return "", fmt.Errorf("the scheduler's inline config does not decode: %w", err)
	}
	if cfg == nil {
		cfg = map[string]any{}
	}
	plugins, _ := cfg["plugins"].([]any)
	plugins = decomposePrecisePrefixCache(cfg, plugins, url)
	for _, p := range plugins {
		plugin, ok := p.(map[string]any)
		if !ok || plugin["type"] != tokenProducerPlugin {
			continue
		}
		params := mapAt(plugin, "parameters")
		if _, set := params["modelName"]; !set {
			params["modelName"] = TokenizerModelPath
		}
		vllm := mapAt(params, "vllm")
		if _, set := vllm["url"]; !set {
			vllm["url"] = url
		}
	}
	if plugins != nil {
		cfg["plugins"] = plugins
	}
	out, err := yaml.Marshal(cfg)
	return string(out), err
}

// decomposePrecisePrefixCache replaces the precise-prefix-cache-scorer
// plugin (and any prefix-cache-scorer beside it) with the three plugins
// that take its place, where it stood, and renames the profiles' references
// to it, once each.
func decomposePrecisePrefixCache(cfg map[string]any, plugins []any, url string) []any {
	at := slices.IndexFunc(plugins, func(p any) bool { return typeOf(p) == precisePrefixCacheScorerPlugin })
	if at < 0 {
		return plugins
	}
	producer := map[string]any{"type": precisePrefixCacheProducerPlugin}
	if params := producerParams(plugins[at]); len(params) > 0 {
		producer["parameters"] = params
	}
	replacement := []any{
		map[string]any{"type": tokenProducerPlugin, "parameters": map[string]any{"modelName": TokenizerModelPath, "vllm": map[string]any{"url": url}}},
		producer,
		map[string]any{"type": prefixCacheScorerPlugin, "parameters": map[string]any{"prefixMatchInfoProducerName": precisePrefixCacheProducerPlugin}},
	}
	var out []any
	for i, p := range plugins {
		if i == at {
			out = append(out, replacement...)
		} else if typeOf(p) != prefixCacheScorerPlugin {
			out = append(out, p)
		}
	}
	profiles, _ := cfg["schedulingProfiles"].([]any)
	for _, p := range profiles {
		profile, ok := p.(map[string]any)
		if !ok {
			continue
		}
		refs, _ := profile["plugins"].([]any)
		seen := false
		kept := refs[:0:0]
		for _, r := range refs {
			ref, ok := r.(map[string]any)
			if ok && ref["pluginRef"] == precisePrefixCacheScorerPlugin {
				ref["pluginRef"] = prefixCacheScorerPlugin
			}
			if ok && ref["pluginRef"] == prefixCacheScorerPlugin {
				if seen {
					continue
				}
				seen = true
			}
			kept = append(kept, r)
		}
		if refs != nil {
			profile["plugins"] = kept
		}
	}
	return out
}

// producerParams are the precise-prefix-cache-scorer's parameters as the
// producer takes them: the indexer's tokenizer pool dropped (the tokenizer
// does that work now) and its token processor config moved up, unless set
// there already.
func producerParams(p any) map[string]any {
	plugin, _ := p.(map[string]any)
	params, _ := plugin["parameters"].(map[string]any)
	out := map[string]any{}
	for k, v := range params {
		indexer, isMap := v.(map[string]any)
		if k != "indexerConfig" || !isMap {
			out[k] = v
			continue
		}
		cleaned := map[string]any{}
		for ik, iv := range indexer {
			switch {
			case ik == "tokenizersPoolConfig":
			case ik == "tokenProcessorConfig":
				if _, set := params["tokenProcessorConfig"]; !set {
					out["tokenProcessorConfig"] = iv
				}
			default:
				cleaned[ik] = iv
			}
		}
		if len(cleaned) > 0 {
			out[k] = cleaned
		}
	}
	return out
}

func typeOf(p any) any {
	plugin, _ := p.(map[string]any)
	return plugin["type"]
}

// mapAt returns m[key] as a map, made and stored when absent.
func mapAt(m map[string]any, key string) map[string]any {
	v, ok := m[key].(map[string]any)
	if !ok {
		v = map[string]any{}
		m[key] = v
	}
	return v
}
