package runtime

import (
	"fmt"
	"sort"
	"strings"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
)

// Request is what selection needs to know of an InferenceService's predictor.
type Request struct {
	ModelFormat v1beta1.ModelFormat
	// Protocol is the predictor's protocolVersion; nil when unset.
	Protocol *v1beta1.Protocol
	// Runtime is the explicitly named runtime; empty to auto-select.
	Runtime string
	// MultiNode: the predictor has a workerSpec. Only runtimes with a
	// workerSpec serve it, and only those without one serve the others
	// (KServe's rule).
	MultiNode bool
	// Previous is the runtime chosen before, from status. It is kept while
	// still valid (stickiness); the caller passes it only while the spec is
	// unchanged since that choice.
	Previous *Previous
}

// Previous is an earlier selection, as recorded in status.
type Previous struct {
	Name       string
	Namespaced bool
	Protocol   v1beta1.Protocol
}

// Selection is the chosen runtime and protocol.
type Selection struct {
	Runtime  Runtime
	Protocol v1beta1.Protocol
	// Sticky is true when the previous choice was kept.
	Sticky bool
}

// SelectionError is a failure to select, with a reason for
// status.modelStatus.lastFailureInfo.
type SelectionError struct {
	Reason  v1beta1.FailureReason
	Message string
}

// Error is the reason followed by the message.
func (e *SelectionError) Error() string { return string(e.Reason) + ": " + e.Message }

// maxListedSkips bounds how many skipped runtimes a message names.
const maxListedSkips = 5

// Select chooses a runtime for req among runtimes (namespaced and cluster
// runtimes together).
func Select(req Request, runtimes []Runtime) (*Selection, error) {
	if req.Runtime != "" {
		return selectExplicit(req, runtimes)
	}
	if err := undecodablePrevious(req, runtimes); err != nil {
		return nil, err
	}
	if sel := keepPrevious(req, runtimes); sel != nil {
		return sel, nil
	}
	return selectAuto(req, runtimes)
}

func describe(req Request) string {
	s := "model format " + req.ModelFormat.Name
	if req.ModelFormat.Version != nil {
		s += " version " + *req.ModelFormat.Version
	}
	if req.Protocol != nil {
		s += " with protocol " + string(*req.Protocol)
	} else {
		s += " (no protocolVersion)"
	}
	return s
}

func selectExplicit(req Request, runtimes []Runtime) (*Selection, error) {
	var found *Runtime
	// A namespaced runtime of the name wins over a cluster runtime of the name.
	for i := range runtimes {
		r := &runtimes[i]
		if r.Name == req.Runtime && (found == nil || r.Namespaced && !found.Namespaced) {
			found = r
		}
	}
	if found == nil {
		return nil, &SelectionError{v1beta1.RuntimeNotRecognized, fmt.Sprintf(
			"no ServingRuntime or ClusterServingRuntime named %q exists for %s", req.Runtime, describe(req))}
	}
	fail := func(reason v1beta1.FailureReason, why string) error {
		return &SelectionError{reason, fmt.Sprintf("%s %s; it cannot serve %s", found, why, describe(req))}
	}
	switch {
	case found.DecodeError != "":
		return nil, fail(v1beta1.RuntimeUndecodable, "cannot be read, its spec does not decode ("+found.DecodeError+")")
	case found.Spec.IsDisabled():
		return nil, fail(v1beta1.RuntimeDisabled, "is disabled")
	case found.Spec.IsMultiModel():
		return nil, fail(v1beta1.RuntimeMultiModel, "is a multi-model runtime, which Serval does not serve")
	}
	if entry, why := found.formatEntry(req.ModelFormat); entry == nil {
		return nil, fail(v1beta1.RuntimeUnsupportedModelFormat, why.String())
	}
	protocol, ok := explicitProtocol(req, *found)
	if !ok {
		return nil, fail(v1beta1.RuntimeUnsupportedProtocol, "does not support protocol "+string(*req.Protocol))
	}
	return &Selection{Runtime: *found, Protocol: protocol}, nil
}

func explicitProtocol(req Request, r Runtime) (v1beta1.Protocol, bool) {
	if req.Protocol != nil {
		return *req.Protocol, r.supportsProtocol(*req.Protocol)
	}
	if r.supportsProtocol(v1beta1.ProtocolV1) {
		return v1beta1.ProtocolV1, true
	}
	return r.bestProtocol(), true
}

// undecodablePrevious fails the selection when the previous runtime exists
// but its spec no longer decodes: moving the InferenceService to another
// runtime because of a broken edit would roll it for nothing, so it stays
// as it runs and is told why.
func undecodablePrevious(req Request, runtimes []Runtime) error {
	prev := req.Previous
	if prev == nil {
		return nil
	}
	for _, r := range runtimes {
		if r.Name == prev.Name && r.Namespaced == prev.Namespaced && r.DecodeError != "" {
			return &SelectionError{v1beta1.RuntimeUndecodable, fmt.Sprintf(
				"%s, which serves this InferenceService, cannot be read: its spec does not decode (%s); fix the runtime, the predictor keeps running meanwhile", r, r.DecodeError)}
		}
	}
	return nil
}

// keepPrevious returns the previous selection when its runtime still exists
// and can still be auto-selected for the request.
func keepPrevious(req Request, runtimes []Runtime) *Selection {
	prev := req.Previous
	if prev == nil {
		return nil
	}
	protocol := prev.Protocol
	if req.Protocol != nil {
		protocol = *req.Protocol
	}
	for _, r := range runtimes {
		if r.Name != prev.Name || r.Namespaced != prev.Namespaced {
			continue
		}
		if _, why := autoSelectable(r, req); why.kind == noSkip && r.supportsProtocol(protocol) {
			return &Selection{Runtime: r, Protocol: protocol, Sticky: true}
		}
	}
	return nil
}

// autoSelectable returns the priority of the format entry when the runtime
// may be auto-selected for the format, else why not.
func autoSelectable(r Runtime, req Request) (int32, skip) {
	f := req.ModelFormat
	switch {
	case r.DecodeError != "":
		return 0, skip{kind: skipUndecodable, detail: r.DecodeError}
	case r.Spec.IsDisabled():
		return 0, skip{kind: skipDisabled}
	case r.Spec.IsMultiModel():
		return 0, skip{kind: skipMultiModel}
	case r.Spec.WorkerSpec != nil && !req.MultiNode:
		return 0, skip{kind: skipMultiNode, detail: "multi-node (it has a workerSpec; the predictor has none)"}
	case r.Spec.WorkerSpec == nil && req.MultiNode:
		return 0, skip{kind: skipMultiNode, detail: "not multi-node (the predictor's workerSpec needs a runtime with a workerSpec)"}
	}
	entry, why := r.formatEntry(f)
	if entry == nil {
		return 0, why
	}
	if entry.AutoSelect == nil || !*entry.AutoSelect {
		return 0, skip{kind: skipAutoSelectOff, format: f}
	}
	return priority(entry), skip{}
}

// candidate is an auto-selectable runtime with its ordering keys.
type candidate struct {
	runtime  Runtime
	priority int32
	protocol v1beta1.Protocol
}

func selectAuto(req Request, runtimes []Runtime) (*Selection, error) {
	var candidates, v1 []candidate
	for _, r := range runtimes {
		prio, why := autoSelectable(r, req)
		if why.kind != noSkip || req.Protocol != nil && !r.supportsProtocol(*req.Protocol) {
			continue
		}
		c := candidate{runtime: r, priority: prio, protocol: r.bestProtocol()}
		if req.Protocol != nil {
			c.protocol = *req.Protocol
		}
		candidates = append(candidates, c)
		if req.Protocol == nil && r.supportsProtocol(v1beta1.ProtocolV1) {
			c.protocol = v1beta1.ProtocolV1
			v1 = append(v1, c)
		}
	}
	// No protocol given: KServe's answer (v1) whenever a v1 runtime exists, so
	// sklearn stays on the v1 sklearn server; otherwise the best of any protocol.
	if len(v1) > 0 {
		candidates = v1
	}
	if len(candidates) == 0 {
		return nil, &SelectionError{v1beta1.NoSupportingRuntime, noRuntimeMessage(req, skipReasons(req, runtimes))}
	}
	sortCandidates(candidates)
	best := candidates[0]
	return &Selection{Runtime: best.runtime, Protocol: best.protocol}, nil
}

// sortCandidates orders candidates totally: namespaced first; then higher
// priority (a priority before none); then protocol rank; then newest; then name.
func sortCandidates(cs []candidate) {
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.runtime.Namespaced != b.runtime.Namespaced {
			return a.runtime.Namespaced
		}
		if a.priority != b.priority {
			return a.priority > b.priority
		}
		if ra, rb := protocolRank[a.protocol], protocolRank[b.protocol]; ra != rb {
			return ra < rb
		}
		if !a.runtime.Created.Equal(&b.runtime.Created) {
			return b.runtime.Created.Before(&a.runtime.Created)
		}
		return a.runtime.Name < b.runtime.Name
	})
}

// nearness ranks why a runtime was skipped by how near it came to serving
// the request: one that serves the format but not the protocol is the miss
// a user most wants to hear about; one that does not know the format at all,
// the least. Lower is nearer.
var nearness = map[skipKind]int{
	skipProtocol: 0, skipVersion: 1, skipAutoSelectOff: 2, skipDisabled: 3, skipMultiModel: 4, skipMultiNode: 4, skipUndecodable: 5, skipFormat: 6,
}

// skipReasons says why each runtime was skipped, nearest misses first. It
// runs only when selection fails: formatting reasons for every runtime on
// each successful selection would be most of its cost.
func skipReasons(req Request, runtimes []Runtime) []string {
	type skipped struct {
		rank int
		text string
	}
	all := make([]skipped, 0, len(runtimes))
	for _, r := range runtimes {
		_, why := autoSelectable(r, req)
		if why.kind == noSkip && req.Protocol != nil && !r.supportsProtocol(*req.Protocol) {
			why = skip{kind: skipProtocol, detail: string(*req.Protocol)}
		}
		all = append(all, skipped{nearness[why.kind], r.String() + ": " + why.String()})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].rank != all[j].rank {
			return all[i].rank < all[j].rank
		}
		return all[i].text < all[j].text
	})
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = s.text
	}
	return out
}

func noRuntimeMessage(req Request, skipped []string) string {
	msg := "no runtime supports " + describe(req)
	if len(skipped) == 0 {
		return msg + ": no ServingRuntime or ClusterServingRuntime exists"
	}
	msg += fmt.Sprintf("; considered %d: ", len(skipped))
	if len(skipped) > maxListedSkips {
		return msg + strings.Join(skipped[:maxListedSkips], "; ") + fmt.Sprintf("; and %d more", len(skipped)-maxListedSkips)
	}
	return msg + strings.Join(skipped, "; ")
}
