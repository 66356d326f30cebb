package migrate

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// The names rewritten.
const (
	kserveGroup         = "serving.kserve.io"
	servalGroup         = "serving.serval.dev"
	kserveNetworkPrefix = "networking.kserve.io/"
	servalNetworkPrefix = "networking.serval.dev/"
)

// servedKinds are the KServe kinds Serval serves, with the version it serves.
var servedKinds = map[string]string{"InferenceService": "v1beta1", "ServingRuntime": "v1alpha1", "ClusterServingRuntime": "v1alpha1",
	"InferenceGraph": "v1alpha1", "ClusterStorageContainer": "v1alpha1",
	"LocalModelNodeGroup": "v1alpha1", "LocalModelCache": "v1alpha1", "LocalModelNamespaceCache": "v1alpha1", "LocalModelNode": "v1alpha1"}

// Finding is something that could not be carried over, or a change the user
// should know about.
type Finding struct {
	File string
	// Document is the 1-based index of the document in its file.
	Document int
	// Path locates the field, such as spec.predictor.logger.
	Path    string
	Message string
	// Blocking is true for what Serval rejects or does not serve; false for
	// notes (a pinned protocol).
	Blocking bool
}

// String is the finding as `serval migrate` prints it, with its level.
func (f Finding) String() string {
	level := "note"
	if f.Blocking {
		level = "cannot carry over"
	}
	path := ""
	if f.Path != "" {
		path = " " + f.Path
	}
	return fmt.Sprintf("%s: document %d%s: %s: %s", f.File, f.Document, path, level, f.Message)
}

// Options tunes a migration.
type Options struct {
	// NoPinProtocol leaves protocolVersion unset where Serval would choose a
	// different protocol than KServe, letting Serval choose.
	NoPinProtocol bool
	// DefaultMode is the source cluster's default deployment mode, which its
	// InferenceServices without the annotation ran in: Serverless (KServe's
	// default, also when empty) or RawDeployment (aliases Knative, Standard).
	DefaultMode string
}

// sourceMode is DefaultMode, normalised; Knative when empty or unknown.
func (o Options) sourceMode() v1beta1.DeploymentMode {
	if m, ok := v1beta1.NormalizeDeploymentMode(o.DefaultMode); ok {
		return m
	}
	return v1beta1.Knative
}

// docSeparator matches a YAML document separator line.
var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*(#.*)?$`)

// File migrates one multi-document YAML file. It returns the output, with the
// documents in their order, and the findings.
func File(name string, data []byte, opts Options) ([]byte, []Finding, error) {
	var out bytes.Buffer
	var findings []Finding
	parts := splitDocuments(data)
	for i, raw := range parts {
		doc, fs, err := document(name, i+1, raw, opts)
		if err != nil {
			return nil, nil, err
		}
		findings = append(findings, fs...)
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(doc)
	}
	return out.Bytes(), findings, nil
}

// splitDocuments splits at separator lines, keeping each document's bytes.
func splitDocuments(data []byte) [][]byte {
	locs := docSeparator.FindAllIndex(data, -1)
	var parts [][]byte
	start := 0
	for _, loc := range locs {
		if part := data[start:loc[0]]; start > 0 || len(bytes.TrimSpace(part)) > 0 {
			parts = append(parts, part)
		}
		start = loc[1]
		if start < len(data) && data[start] == '\n' {
			start++
		}
	}
	return append(parts, data[start:])
}

// document migrates one document; a document that is not KServe's is
// returned as it is.
func document(file string, index int, raw []byte, opts Options) ([]byte, []Finding, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err != nil {
		return nil, nil, fmt.Errorf("%s: document %d: %w", file, index, err)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return raw, nil, nil
	}
	obj := root.Content[0]
	apiVersion := lookup(obj, "apiVersion")
	if apiVersion == nil || !strings.HasPrefix(apiVersion.Value, kserveGroup+"/") {
		return raw, nil, nil
	}
	kind := ""
	if k := lookup(obj, "kind"); k != nil {
		kind = k.Value
	}
	at := func(path, msg string, blocking bool) Finding {
		return Finding{File: file, Document: index, Path: path, Message: msg, Blocking: blocking}
	}
	if llmKinds[kind] {
		version := strings.TrimPrefix(apiVersion.Value, kserveGroup+"/")
		if version != "v1alpha1" && version != "v1alpha2" {
			return raw, []Finding{at("apiVersion", fmt.Sprintf("%s %s is an API version Serval cannot convert (it converts v1alpha1 and v1alpha2); "+
				"the document is passed through unchanged", apiVersion.Value, kind), true)}, nil
		}
		apiVersion.Value = servalGroup + "/v1alpha2"
		rewriteKeys(obj)
		var findings []Finding
		for _, f := range migrateLLM(version, obj) {
			findings = append(findings, at(f.path, f.msg, f.blocking))
		}
		return encodeDocument(&root, layoutOf(raw), file, index, findings)
	}
	version, served := servedKinds[kind]
	if !served {
		return raw, []Finding{at("kind", kind+" is not served by Serval; the document is passed through unchanged", true)}, nil
	}
	if got := strings.TrimPrefix(apiVersion.Value, kserveGroup+"/"); got != version {
		return raw, []Finding{at("apiVersion", fmt.Sprintf("%s %s is an API version Serval does not serve (it serves %s %s/%s); "+
			"convert it to %s first; the document is passed through unchanged", apiVersion.Value, kind, kind, kserveGroup, version, version), true)}, nil
	}
	apiVersion.Value = servalGroup + strings.TrimPrefix(apiVersion.Value, kserveGroup)
	rewriteKeys(obj)
	var findings []Finding
	for _, f := range inspect(kind, obj, opts) {
		findings = append(findings, at(f.path, f.msg, f.blocking))
	}
	return encodeDocument(&root, layoutOf(raw), file, index, findings)
}

// encodeDocument writes a migrated document back as YAML, indented as
// the input was.
func encodeDocument(root *yaml.Node, l layout, file string, index int, findings []Finding) ([]byte, []Finding, error) {
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(l.spaces)
	if l.compact {
		enc.CompactSeqIndent()
	}
	if err := enc.Encode(root); err != nil {
		return nil, nil, fmt.Errorf("%s: document %d: %w", file, index, err)
	}
	return out.Bytes(), findings, nil
}

// lookup returns the value node of key in a mapping node, or nil.
func lookup(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// rewriteKeys renames KServe's annotation and label keys anywhere in the
// document and normalises legacy deployment-mode values.
func rewriteKeys(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, value := n.Content[i], n.Content[i+1]
			switch {
			case strings.HasPrefix(key.Value, kserveGroup+"/"):
				key.Value = servalGroup + strings.TrimPrefix(key.Value, kserveGroup)
			case strings.HasPrefix(key.Value, kserveNetworkPrefix):
				key.Value = servalNetworkPrefix + strings.TrimPrefix(key.Value, kserveNetworkPrefix)
			}
			if key.Value == servalGroup+"/deploymentMode" && value.Kind == yaml.ScalarNode {
				switch value.Value {
				case "RawDeployment":
					value.Value = "Standard"
				case "Serverless":
					value.Value = "Knative"
				}
			}
		}
	}
	for _, c := range n.Content {
		rewriteKeys(c)
	}
}
