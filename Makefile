# Serval's build. Every tool the targets need is built, pinned, into bin/ and
# reused when present. `make help` lists the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
.DEFAULT_GOAL := help

ROOT := $(CURDIR)
BIN := $(ROOT)/bin
export SERVAL_ROOT := $(ROOT)

CONTROLLER_TOOLS_VERSION := v0.23.0
HELM_VERSION := v3.22.0
# Debian bookworm's Chromium, for the console's browser tests.
CHROMIUM_VERSION := 148.0.7778.167-1~deb12u1

CONTROLLER_GEN := $(BIN)/controller-gen
HELM := $(BIN)/helm
CONTROLPLANE_BINS := $(BIN)/etcd $(BIN)/kube-apiserver $(BIN)/kube-controller-manager $(BIN)/kube-scheduler $(BIN)/kubectl $(BIN)/kwok

# Tests that start API servers run two packages at a time on a 2-core machine.
TEST_FLAGS ?= -p 2 -timeout 25m

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z0-9_-]+:.*##/ {printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2} /^##@/ {printf "\n\033[1m%s\033[0m\n", substr($$0, 5)}' $(MAKEFILE_LIST)

##@ Development

.PHONY: run
run: controlplane ## Run a local cluster on simulated nodes with Serval and a sample going Ready (RUN_ARGS="--sample onnx").
	go run ./cmd/serval dev $(RUN_ARGS)

.PHONY: fmt
fmt: ## Format the Go code.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet on every module.
	go vet ./...
	cd test/controlplane/etcd && go vet ./...
	cd test/controlplane/kube && go vet ./...

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code for the API types.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./pkg/apis/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the CRDs (config/crd, schemaless pod fields typed against decode failures by hack/crdguard), the manager's RBAC (config/rbac), the webhook configurations (config/webhook) and the Grafana dashboards (charts/serval/dashboards).
	$(CONTROLLER_GEN) crd paths="./pkg/apis/serving/v1alpha1;./pkg/apis/serving/v1alpha2;./pkg/apis/serving/v1beta1" output:crd:artifacts:config=config/crd/bases
	go run ./hack/crdguard config/crd/bases/*.yaml
	$(CONTROLLER_GEN) rbac:roleName=serval-manager paths="./pkg/controller/...;./pkg/webhook/...;./pkg/operator/..." output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) rbac:roleName=serval-node-agent paths=./pkg/nodeagent/... output:rbac:artifacts:config=config/rbac/node-agent
	$(CONTROLLER_GEN) rbac:roleName=serval-activator paths=./pkg/activator/... output:rbac:artifacts:config=config/rbac/activator
	$(CONTROLLER_GEN) webhook paths=./pkg/webhook/... output:webhook:artifacts:config=config/webhook
	@rm -rf charts/serval-crds/files charts/serval/files && mkdir -p charts/serval-crds/files charts/serval/files/runtimes charts/serval/files/llmisvcconfig charts/serval/files/storagecontainers
	cp config/crd/bases/*.yaml charts/serval-crds/files/
	cp config/rbac/role.yaml charts/serval/files/role.yaml
	cp config/rbac/endpoint-picker.yaml charts/serval/files/endpoint-picker.yaml
	cp config/rbac/routing-sidecar.yaml charts/serval/files/routing-sidecar.yaml
	cp config/rbac/node-agent/role.yaml charts/serval/files/node-agent-role.yaml
	cp config/rbac/activator/role.yaml charts/serval/files/activator-role.yaml
	cp config/policy/model-mounts.yaml charts/serval/files/model-mounts-policy.yaml
	cp config/policy/node-agent.yaml charts/serval/files/node-agent-policy.yaml
	cp config/policy/activator.yaml charts/serval/files/activator-policy.yaml
	cp config/policy/manager-bindings.yaml charts/serval/files/manager-bindings-policy.yaml
	cp config/policy/scale-from-zero.yaml charts/serval/files/scale-from-zero-policy.yaml
	cp config/webhook/manifests.yaml charts/serval/files/webhooks.yaml
	cp config/runtimes/*.yaml charts/serval/files/runtimes/
	cp config/llmisvcconfig/*.yaml charts/serval/files/llmisvcconfig/
	cp config/storagecontainers/*.yaml charts/serval/files/storagecontainers/
	go run ./hack/dashboards charts/serval/dashboards

.PHONY: verify
verify: generate manifests ## Regenerate, then fail if generated files drifted from what is committed.
	@git diff --exit-code -- pkg/apis config charts || { echo "generated files are out of date: run 'make generate manifests' and commit"; exit 1; }
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

.PHONY: test
test: controlplane keda-operator chromium $(HELM) verify helm-lint ## Run all tests (builds the control plane, KEDA's operator and helm into bin/, and installs Debian's Chromium, first).
	go vet ./...
	go test $(TEST_FLAGS) ./...

.PHONY: test-unit
test-unit: ## Run the tests that need no control plane and build no binary (under a minute on a warm build cache; bin/ not needed).
	go test -short $$(hack/packages.sh unit)

.PHONY: test-faults
test-faults: controlplane ## Run the fault tests at larger sizes (test/faults -long), printing their figures.
	go test -timeout 60m -v -count 1 ./test/faults/... -args -long

FUZZTIME ?= 30s
.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each (FUZZTIME=10m) and keep the new corpus entries in testdata/fuzz.
	FUZZTIME=$(FUZZTIME) hack/fuzz.sh

.PHONY: test-e2e
test-e2e: controlplane chromium $(HELM) ## Run only the end-to-end tests on the local cluster (test/e2e), the console's in Chromium.
	go test $(TEST_FLAGS) ./test/e2e/...

.PHONY: bench
bench: ## Run the micro benchmarks (docs/benchmarks.md shows the figures).
	go test -run '^$$' -bench . -benchmem -count 5 ./pkg/...

N ?= 100
.PHONY: bench-scale
bench-scale: controlplane ## Measure Serval with N InferenceServices against the floor (N=1000; BENCH_ARGS="--json out.json").
	go run ./cmd/serval bench -n $(N) $(BENCH_ARGS)

.PHONY: router
router: ## Build the InferenceGraph router into bin/router.
	go build -o $(BIN)/router ./cmd/router

.PHONY: bench-graph
bench-graph: router ## Measure the InferenceGraph router against calling a backend directly (BENCH_ARGS="--json out.json").
	go run ./cmd/serval bench graph --router $(BIN)/router $(BENCH_ARGS)

##@ Tools

.PHONY: controlplane
controlplane: ## Build etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok into bin/.
	@BIN_DIR=$(BIN) test/controlplane/build.sh

.PHONY: keda-operator
keda-operator: ## Build KEDA's operator into bin/ from its pinned module (the scale-from-zero tests run it).
	@BIN_DIR=$(BIN) test/controlplane/build.sh keda

.PHONY: chromium
chromium: ## Install Debian's Chromium (pinned, CHROMIUM_VERSION) and link it as bin/chromium, for the console's browser tests.
	@hack/chromium.sh $(CHROMIUM_VERSION) $(BIN)

$(CONTROLLER_GEN):
	@echo "building controller-gen $(CONTROLLER_TOOLS_VERSION) into bin/"
	GOBIN=$(BIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)

$(HELM):
	@echo "building helm $(HELM_VERSION) into bin/ (about 2 minutes)"
	GOBIN=$(BIN) go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

.PHONY: helm-lint
helm-lint: $(HELM) ## Lint the charts and render them with default and non-default values.
	$(HELM) lint charts/serval charts/serval-crds
	$(HELM) lint charts/serval --set webhook.certMode=external --set 'watchNamespaces={team-a}' --set replicas=2
	$(HELM) template serval-crds charts/serval-crds --set keep=false > /dev/null
	$(HELM) template serval charts/serval --namespace serval-system > /dev/null
	$(HELM) template serval charts/serval --namespace serval-system --set webhook.certMode=external > /dev/null
	$(HELM) template serval charts/serval --namespace serval-system --set webhook.certMode=external \
		--set webhook.certSecret=serval-certs --set webhook.certManager.enabled=false > /dev/null
	$(HELM) template serval charts/serval --namespace serval-system --set 'watchNamespaces={team-a,team-b}' \
		--set replicas=3 --set metrics.serviceMonitor.enabled=true --set webhook.url=https://127.0.0.1:9443 > /dev/null
	$(HELM) template serval charts/serval --namespace serval-system --set activator.enabled=true > /dev/null
	$(HELM) template serval charts/serval --namespace serval-system --set grafana.dashboards.enabled=true \
		--set metrics.prometheusRule.enabled=true --set metrics.podMonitors.enabled=true --set metrics.podMonitors.llmTLS=true \
		--set console.enabled=true > /dev/null
	@# The policies name the release's accounts, not serval-system's.
	$(HELM) template serval charts/serval --namespace ml-platform --set activator.enabled=true --set localModel.enabled=true > $(BIN)/policy-accounts.yaml
	@grep -q "system:serviceaccount:ml-platform:serval-manager'" $(BIN)/policy-accounts.yaml && grep -q "system:serviceaccount:ml-platform:serval-node-agent'" $(BIN)/policy-accounts.yaml && \
		grep -q "system:serviceaccount:ml-platform:serval-activator'" $(BIN)/policy-accounts.yaml && ! grep -q "system:serviceaccount:serval-system:" $(BIN)/policy-accounts.yaml || \
		{ echo "the chart's admission policies do not name the release's accounts"; exit 1; }

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
.PHONY: image
image: ## Build the image without Docker into bin/image (OCI layout and docker-load tarball; VERSION=v0.2.0).
	go run ./hack/image --version $(VERSION) --out $(BIN)/image

