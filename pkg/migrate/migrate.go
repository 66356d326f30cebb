package migrate

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
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
	// StorageContainers are the target cluster's ClusterStorageContainers
	// beyond those Serval ships; Run adds those of its inputs.
	StorageContainers []v1alpha1.ClusterStorageContainer
}

// storageContainers are the ClusterStorageContainers admission would see.
func (o Options) storageContainers() []v1alpha1.ClusterStorageContainer {
	return append(shippedContainers(), o.StorageContainers...)
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
// documents in their order and the separator lines as they were, and the
// findings.
func File(name string, data []byte, opts Options) ([]byte, []Finding, error) {
	var out bytes.Buffer
	var findings []Finding
	parts := splitDocuments(data)
	opts.StorageContainers = append(slices.Clip(opts.StorageContainers), containersIn(parts)...)
	for i, p := range parts {
		doc, fs, err := document(name, i+1, p.body, opts)
		if err != nil {
			return nil, nil, err
		}
		findings = append(findings, fs...)
		out.Write(p.separator)
		out.Write(doc)
	}
	return out.Bytes(), findings, nil
}

// containersIn are the ClusterStorageContainers among the documents, as
// admission would see them once applied.
func containersIn(parts []part) []v1alpha1.ClusterStorageContainer {
	var out []v1alpha1.ClusterStorageContainer
	for _, p := range parts {
		var head struct{ APIVersion, Kind string }
		if sigsyaml.Unmarshal(p.body, &head) != nil || head.Kind != "ClusterStorageContainer" ||
			!strings.HasPrefix(head.APIVersion, kserveGroup+"/") && !strings.HasPrefix(head.APIVersion, servalGroup+"/") {
			continue
		}
		sc := v1alpha1.ClusterStorageContainer{}
		if sigsyaml.Unmarshal(p.body, &sc) == nil {
			out = append(out, sc)
		}
	}
	return out
}

// part is one document of a file: the separator line before it (with its
// comment and newline; none before a first document without one) and its
// bytes.
type part struct{ separator, body []byte }

// splitDocuments splits at separator lines, keeping each document's bytes
// and each separator's. Blank text before a first separator belongs to it.
func splitDocuments(data []byte) []part {
	locs := docSeparator.FindAllIndex(data, -1)
	var parts []part
	sepStart, start := 0, 0
	for _, loc := range locs {
		if body := data[start:loc[0]]; start > 0 || len(bytes.TrimSpace(body)) > 0 {
			parts = append(parts, part{separator: data[sepStart:start], body: body})
			sepStart = loc[0]
		}
		start = loc[1]
		if start < len(data) && data[start] == '\n' {
			start++
		}
	}
	return append(parts, part{separator: data[sepStart:start], body: data[start:]})
}

// document migrates one document; a document that is not KServe's is
// returned as it is.
func document(file string, index int, raw []byte, opts Options) ([]byte, []Finding, error) {
	var parsed yaml.Node
	if err := yaml.Unmarshal(raw, &parsed); err != nil {
		return nil, nil, fmt.Errorf("%s: document %d: %w", file, index, err)
	}
	// The migration edits a copy; the parsed tree keeps the positions of
	// what it changes in raw (see rewriteInPlace).
	from := map[*yaml.Node]*yaml.Node{}
	root := *copyTree(&parsed, from)
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
		for _, f := range append(migrateLLM(version, obj), admissionFindings(kind, obj, opts.storageContainers())...) {
			findings = append(findings, at(f.path, f.msg, f.blocking))
		}
		return rewrite(raw, &parsed, &root, from, file, index, findings)
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
	for _, f := range append(inspect(kind, obj, opts), admissionFindings(kind, obj, opts.storageContainers())...) {
		findings = append(findings, at(f.path, f.msg, f.blocking))
	}
	return rewrite(raw, &parsed, &root, from, file, index, findings)
}

// rewrite returns the migrated document: the input with the changed lines
// edited in place, or, where a change cannot be placed in the text,
// encoded whole, indented as the input was.
func rewrite(raw []byte, parsed, root *yaml.Node, from map[*yaml.Node]*yaml.Node, file string, index int, findings []Finding) ([]byte, []Finding, error) {
	l := layoutOf(raw)
	if out, ok := rewriteInPlace(raw, parsed, root, from, l); ok {
		return out, findings, nil
	}
	out, err := encodeNode(root, l)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: document %d: %w", file, index, err)
	}
	return out, findings, nil
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
