package config

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/storage"
	"github.com/serval-dev/serval/pkg/strtemplate"
)

// ConfigMapName is the name of Serval's ConfigMap, in the manager's namespace.
const ConfigMapName = "serval-config"

// Config is a validated snapshot of serval-config. Treat it as read-only.
type Config struct {
	// DefaultDeploymentMode is the mode of InferenceServices without the
	// deployment-mode annotation (key deploy.defaultDeploymentMode).
	DefaultDeploymentMode v1beta1.DeploymentMode
	// StorageInitializer is the init container that downloads models.
	StorageInitializer StorageInitializer
	// DefaultResources are the model server's resources when neither the
	// InferenceService nor the runtime sets any (keys resources.*).
	DefaultResources corev1.ResourceRequirements
	// Ingress configures external routes (keys ingress.*).
	Ingress Ingress
	// Router configures the InferenceGraph router (keys router.*).
	Router Router
	// Agent configures the logger and batcher sidecar (keys agent.*,
	// logger.defaultUrl, batcher.maxBatchSize, batcher.maxLatency).
	Agent Agent
	// LLMAutoscaling is where KEDA reads the Workload Variant Autoscaler's
	// desired replicas (keys llmAutoscaling.prometheus.*; KServe's
	// autoscaling-wva-controller-config).
	LLMAutoscaling LLMAutoscaling
	// Activator is where the activator runs (keys activator.*).
	Activator Activator
	// PickerAuthDelegator binds each managed endpoint picker's
	// ServiceAccount to the ClusterRole system:auth-delegator, as KServe
	// does, so that the picker can check who scrapes its metrics (key
	// llm.pickerAuthDelegator).
	PickerAuthDelegator bool
	// LocalModel configures the model caches and their node agent (keys
	// localModel.*; KServe's localModel).
	LocalModel LocalModel
	// Templates bound the rendering of every template string a user
	// writes: a runtime's command, args and env, an LLMInferenceService's
	// and its presets' fields (keys templates.maxOutputBytes,
	// templates.maxSteps, templates.maxRangeIterations,
	// templates.maxFormatWidth).
	Templates strtemplate.Limits
}

// Activator is the activator of scale from zero in Standard mode.
type Activator struct {
	// ScalerAddress is its KEDA external scaler, host:port (key
	// activator.scalerAddress; the chart sets it when it installs the
	// activator). Empty: no activator, and a component at zero refuses
	// requests until KEDA scales it on its other triggers.
	ScalerAddress string
}

// LocalModel configures the model caches (LocalModelCache and its kinds).
type LocalModel struct {
	// AgentEnabled runs the node agent on every node group's nodes (key
	// localModel.agent.enabled). Off, caches are listed on their nodes but
	// nothing downloads them.
	AgentEnabled bool
	// AgentImage runs the agent (key localModel.agent.image); empty runs
	// the manager's own image, which holds the agent binary.
	AgentImage string
	// JobNamespace is where a LocalModelCache's download Jobs run (key
	// localModel.jobNamespace); a LocalModelNamespaceCache's run in its own
	// namespace, with its own credentials.
	JobNamespace string
	// JobTTLSecondsAfterFinished is how long a finished download Job is
	// kept (key localModel.jobTTLSecondsAfterFinished).
	JobTTLSecondsAfterFinished int32
	// MaxDownloadAttempts is how many download Jobs the agent runs for a
	// model before it reports ModelDownloadError and waits for the cache
	// to change (key localModel.maxDownloadAttempts).
	MaxDownloadAttempts int32
	// FSGroup is the download pods' fsGroup (key localModel.fsGroup); 0
	// for none.
	FSGroup int64
	// ResyncPeriod is how often the agent checks its node's folders (key
	// localModel.reconcilationFrequencyInSecs, in seconds).
	ResyncPeriod time.Duration
	// DeleteGracePeriod is how long a model folder no cache wants any more
	// stays on the disk before the agent deletes it (key
	// localModel.deleteGracePeriod): a cache deleted by mistake and made
	// again, or a list read in a bad moment, deletes nothing.
	DeleteGracePeriod time.Duration
	// FailOversizedCopies fails a copy larger than its cache's declared
	// modelSize, and deletes it (key localModel.oversizedCopy: fail); else
	// the copy is kept with a Warning Event (warn).
	FailOversizedCopies bool
	// VerifyPeriod is how often the agent measures each copy again to
	// check its files are as they were downloaded (key
	// localModel.verifyPeriod); HashBytesPerSecond bounds what it reads to
	// measure, all copies together (key localModel.hashBytesPerSecond);
	// HashTimeout bounds one measure (key localModel.hashTimeout).
	VerifyPeriod, HashTimeout time.Duration
	HashBytesPerSecond        int64
}

// LLMAutoscaling is the Prometheus a KEDA actuator of an
// LLMInferenceService's wva scaling queries.
type LLMAutoscaling struct {
	// PrometheusURL (key llmAutoscaling.prometheus.url); empty means no
	// KEDA actuator can be made.
	PrometheusURL string
	// TLSInsecureSkipVerify (key llmAutoscaling.prometheus.tlsInsecureSkipVerify).
	TLSInsecureSkipVerify bool
	// AuthModes, TriggerAuthName and TriggerAuthKind (keys
	// llmAutoscaling.prometheus.authModes, .triggerAuthName,
	// .triggerAuthKind): KEDA's authentication, both or neither of the
	// first two.
	AuthModes, TriggerAuthName, TriggerAuthKind string
}

// Agent configures KServe's agent sidecar, which logs and batches requests
// in front of a model server.
type Agent struct {
	// Image (key agent.image); KServe's agent image.
	Image string
	// Resources of the agent container (keys agent.cpuRequest, ...).
	Resources corev1.ResourceRequirements
	// LoggerDefaultURL receives the events of a logger without a url (key
	// logger.defaultUrl).
	LoggerDefaultURL string
	// MaxBatchSize and MaxLatency (milliseconds) apply to a batcher that
	// sets none (keys batcher.maxBatchSize, batcher.maxLatency).
	MaxBatchSize, MaxLatency int
}

// Router configures the router of every InferenceGraph.
type Router struct {
	// Image (key router.image); empty runs the manager's own image, which
	// holds the router binary.
	Image string
	// Resources of the router container when the graph sets none (keys
	// router.cpuRequest, ...; KServe's defaults).
	Resources corev1.ResourceRequirements
	// PropagateHeaders are the request headers passed on to every step
	// (key router.propagateHeaders, comma-separated; a name ending in "*"
	// is a prefix). KServe's router.headers.propagate.
	PropagateHeaders []string
	// Limits bound the router's connections and each request (keys
	// router.maxHeaderBytes, router.readTimeout, ...); the graph controller
	// passes them to the router as flags.
	Limits RouterLimits
}

// RouterLimits are the bounds of every InferenceGraph router: what one
// client connection and one request may cost it. A graph's
// spec.routerTimeouts overrides the server timeouts and StepTimeout.
type RouterLimits struct {
	// MaxHeaderBytes caps a request's line and headers (431 above).
	MaxHeaderBytes int64
	// MaxRequestBodyBytes caps a request's body (413 above);
	// MaxResponseBodyBytes a step's response body (502 above).
	MaxRequestBodyBytes, MaxResponseBodyBytes int64
	// ReadHeaderTimeout bounds reading a request's headers; ReadTimeout the
	// whole request; WriteTimeout its response; IdleTimeout a kept-alive
	// connection's wait for the next request.
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// StepTimeout bounds a whole call to a step; StepDialTimeout opening
	// its connection; StepResponseHeaderTimeout the wait for its response
	// headers (0: StepTimeout alone).
	StepTimeout, StepDialTimeout, StepResponseHeaderTimeout time.Duration
	// MaxIdleConnsPerStep is the number of idle connections kept to each
	// step's address.
	MaxIdleConnsPerStep int
	// MaxBufferedBytes bounds the bodies one router holds in memory at
	// once (503 with Retry-After past it); MaxConnections the client
	// connections open at once; MaxConcurrentStreams the requests in
	// flight on one HTTP/2 connection.
	MaxBufferedBytes                     int64
	MaxConnections, MaxConcurrentStreams int
}

// StorageInitializer configures the storage-initializer init container.
type StorageInitializer struct {
	// Image (key storageInitializer.image); KServe's image is compatible.
	Image string
	// Resources (keys storageInitializer.cpuRequest, ...).
	Resources corev1.ResourceRequirements
	// Modelcar configures OCI model images (keys
	// storageInitializer.enableModelcar, ociModelMode, cpuModelcar,
	// memoryModelcar, uidModelcar; KServe's names and defaults).
	Modelcar storage.Modelcar
	// CABundleConfigMapName (key storageInitializer.caBundleConfigMapName,
	// KServe's) names a ConfigMap in Serval's namespace whose cabundle.crt
	// the initializer trusts: copied into each namespace as
	// global-ca-bundle and mounted at CABundleMountPath (key
	// storageInitializer.caBundleVolumeMountPath). "" for none.
	CABundleConfigMapName, CABundleMountPath string
}

// CABundle is the initializer's CA bundle in a served namespace.
func (s *StorageInitializer) CABundle() storage.CABundle {
	if s.CABundleConfigMapName == "" {
		return storage.CABundle{MountPath: s.CABundleMountPath}
	}
	return storage.CABundle{ConfigMap: storage.GlobalCABundleConfigMap, MountPath: s.CABundleMountPath}
}

// Defaults are the values of keys absent from the ConfigMap.
var Defaults = map[string]string{
	"deploy.defaultDeploymentMode":                    "Standard",
	"storageInitializer.image":                        "kserve/storage-initializer:v0.15.2",
	"storageInitializer.cpuRequest":                   "100m",
	"storageInitializer.cpuLimit":                     "1",
	"storageInitializer.memoryRequest":                "100Mi",
	"storageInitializer.memoryLimit":                  "1Gi",
	"storageInitializer.enableModelcar":               "true",
	"storageInitializer.ociModelMode":                 "modelcar",
	"storageInitializer.cpuModelcar":                  "10m",
	"storageInitializer.memoryModelcar":               "15Mi",
	"storageInitializer.uidModelcar":                  "1010",
	"storageInitializer.caBundleConfigMapName":        "",
	"storageInitializer.caBundleVolumeMountPath":      storage.DefaultCABundleMountPath,
	"resources.cpuRequest":                            "1",
	"resources.cpuLimit":                              "1",
	"resources.memoryRequest":                         "2Gi",
	"resources.memoryLimit":                           "2Gi",
	"ingress.enableGatewayApi":                        "false",
	"ingress.gateway":                                 "serval-system/serval-ingress-gateway",
	"ingress.gatewaySectionName":                      "",
	"ingress.ingressClassName":                        "",
	"ingress.ingressDomain":                           "example.com",
	"ingress.domainTemplate":                          "{{ .Name }}-{{ .Namespace }}.{{ .IngressDomain }}",
	"ingress.urlScheme":                               "http",
	"ingress.disableIngressCreation":                  "false",
	"ingress.pathTemplate":                            "",
	"ingress.requireLoadBalancerAddress":              "false",
	"ingress.enableLLMInferenceServiceTLS":            "false",
	"ingress.enableIstioVirtualService":               "",
	"ingress.disableIstioVirtualHost":                 "false",
	"ingress.ingressGateway":                          "knative-serving/knative-ingress-gateway",
	"ingress.localGateway":                            "knative-serving/knative-local-gateway",
	"ingress.localGatewayService":                     "knative-local-gateway.istio-system.svc.cluster.local",
	"agent.image":                                     "kserve/agent:v0.15.2",
	"agent.cpuRequest":                                "100m",
	"agent.cpuLimit":                                  "1",
	"agent.memoryRequest":                             "100Mi",
	"agent.memoryLimit":                               "1Gi",
	"logger.defaultUrl":                               "http://default-broker",
	"batcher.maxBatchSize":                            "32",
	"batcher.maxLatency":                              "5000",
	"llm.pickerAuthDelegator":                         "true",
	"activator.scalerAddress":                         "",
	"llmAutoscaling.prometheus.url":                   "",
	"llmAutoscaling.prometheus.tlsInsecureSkipVerify": "false",
	"llmAutoscaling.prometheus.authModes":             "",
	"llmAutoscaling.prometheus.triggerAuthName":       "",
	"llmAutoscaling.prometheus.triggerAuthKind":       "",
	"localModel.agent.enabled":                        "false",
	"localModel.agent.image":                          "",
	"localModel.jobNamespace":                         "serval-localmodel-jobs",
	"localModel.jobTTLSecondsAfterFinished":           "3600",
	"localModel.maxDownloadAttempts":                  "3",
	"localModel.fsGroup":                              "1000",
	"localModel.reconcilationFrequencyInSecs":         "60",
	"localModel.deleteGracePeriod":                    "10m",
	"localModel.oversizedCopy":                        "fail",
	"localModel.verifyPeriod":                         "24h",
	"localModel.hashBytesPerSecond":                   "200Mi",
	"localModel.hashTimeout":                          "2h",
	"templates.maxOutputBytes":                        "64Ki",
	"templates.maxSteps":                              "100000",
	"templates.maxRangeIterations":                    "10000",
	"templates.maxFormatWidth":                        "1024",
	"router.image":                                    "",
	"router.cpuRequest":                               "100m",
	"router.cpuLimit":                                 "1",
	"router.memoryRequest":                            "100Mi",
	"router.memoryLimit":                              "1Gi",
	"router.propagateHeaders":                         "",
	"router.maxHeaderBytes":                           "1Mi",
	"router.maxRequestBodyBytes":                      "64Mi",
	"router.maxResponseBodyBytes":                     "64Mi",
	"router.readHeaderTimeout":                        "10s",
	"router.readTimeout":                              "60s",
	"router.writeTimeout":                             "60s",
	"router.idleTimeout":                              "180s",
	"router.stepTimeout":                              "60s",
	"router.stepDialTimeout":                          "10s",
	"router.stepResponseHeaderTimeout":                "0s",
	"router.maxIdleConnsPerStep":                      "256",
	"router.maxBufferedBytes":                         "256Mi",
	"router.maxConnections":                           "1024",
	"router.maxConcurrentStreams":                     "64",
}

// KeyError is a bad value for one key.
type KeyError struct {
	Key, Value, Problem string
}

// Error names the serval-config key, its value and what is wrong with it.
func (e KeyError) Error() string {
	return fmt.Sprintf("serval-config key %s: %q %s", e.Key, e.Value, e.Problem)
}

// Default returns the configuration of an absent or empty ConfigMap.
func Default() *Config {
	cfg, errs := Parse(nil)
	if len(errs) > 0 {
		panic(fmt.Sprintf("config defaults are invalid: %v", errs))
	}
	return cfg
}

// Parse reads the ConfigMap's data over the defaults. It returns a config only
// when every key is valid; otherwise the errors name each bad key, unknown keys
// included, so a typo does not go unnoticed.
func Parse(data map[string]string) (*Config, []KeyError) {
	p := parser{data: data}
	cfg := &Config{}
	mode := p.value("deploy.defaultDeploymentMode")
	if m, ok := v1beta1.NormalizeDeploymentMode(mode); ok {
		cfg.DefaultDeploymentMode = m
	} else {
		p.fail("deploy.defaultDeploymentMode", mode, "is not a deployment mode: use Standard or Knative")
	}
	cfg.StorageInitializer.Image = p.nonEmpty("storageInitializer.image")
	cfg.StorageInitializer.Resources = p.resources("storageInitializer.")
	cfg.StorageInitializer.Modelcar = p.modelcar()
	cfg.StorageInitializer.CABundleConfigMapName = p.value("storageInitializer.caBundleConfigMapName")
	if name := cfg.StorageInitializer.CABundleConfigMapName; name != "" {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			p.fail("storageInitializer.caBundleConfigMapName", name, "is not a ConfigMap name: "+strings.Join(msgs, "; "))
		}
	}
	cfg.StorageInitializer.CABundleMountPath = p.value("storageInitializer.caBundleVolumeMountPath")
	if path := cfg.StorageInitializer.CABundleMountPath; !strings.HasPrefix(path, "/") || path == "/" {
		p.fail("storageInitializer.caBundleVolumeMountPath", path, "must be an absolute path other than /")
	}
	cfg.DefaultResources = p.resources("resources.")
	cfg.Ingress = p.ingress()
	cfg.Agent = Agent{Image: p.nonEmpty("agent.image"), Resources: p.resources("agent."), LoggerDefaultURL: p.nonEmpty("logger.defaultUrl"),
		MaxBatchSize: p.positive("batcher.maxBatchSize"), MaxLatency: p.positive("batcher.maxLatency")}
	cfg.Router = Router{Image: p.value("router.image"), Resources: p.resources("router."), PropagateHeaders: p.list("router.propagateHeaders"),
		Limits: p.routerLimits()}
	cfg.LLMAutoscaling = p.llmAutoscaling()
	cfg.PickerAuthDelegator = p.boolean("llm.pickerAuthDelegator")
	cfg.Activator = Activator{ScalerAddress: p.value("activator.scalerAddress")}
	if a := cfg.Activator.ScalerAddress; a != "" {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			p.fail("activator.scalerAddress", a, "is not host:port")
		}
	}
	cfg.LocalModel = p.localModel()
	cfg.Templates = p.templateLimits()
	p.rejectUnknown()
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return cfg, nil
}

type parser struct {
	data map[string]string
	errs []KeyError
}

func (p *parser) value(key string) string {
	if v, ok := p.data[key]; ok {
		return strings.TrimSpace(v)
	}
	return Defaults[key]
}

func (p *parser) llmAutoscaling() LLMAutoscaling {
	const prefix = "llmAutoscaling.prometheus."
	a := LLMAutoscaling{PrometheusURL: p.value(prefix + "url"), TLSInsecureSkipVerify: p.boolean(prefix + "tlsInsecureSkipVerify"),
		AuthModes: p.value(prefix + "authModes"), TriggerAuthName: p.value(prefix + "triggerAuthName"), TriggerAuthKind: p.value(prefix + "triggerAuthKind")}
	if (a.AuthModes == "") != (a.TriggerAuthName == "") {
		p.fail(prefix+"authModes", a.AuthModes, "and "+prefix+"triggerAuthName must both be set or both be empty")
	}
	if k := a.TriggerAuthKind; k != "" && k != "TriggerAuthentication" && k != "ClusterTriggerAuthentication" {
		p.fail(prefix+"triggerAuthKind", k, "is TriggerAuthentication or ClusterTriggerAuthentication")
	}
	return a
}

func (p *parser) localModel() LocalModel {
	const prefix = "localModel."
	l := LocalModel{AgentEnabled: p.boolean(prefix + "agent.enabled"), AgentImage: p.value(prefix + "agent.image"),
		JobNamespace: p.nonEmpty(prefix + "jobNamespace"), JobTTLSecondsAfterFinished: int32(p.positive(prefix + "jobTTLSecondsAfterFinished")),
		MaxDownloadAttempts: int32(p.positive(prefix + "maxDownloadAttempts")), ResyncPeriod: time.Duration(p.positive(prefix+"reconcilationFrequencyInSecs")) * time.Second,
		DeleteGracePeriod: p.duration(prefix+"deleteGracePeriod", true)}
	l.VerifyPeriod = p.duration(prefix+"verifyPeriod", false)
	l.HashTimeout = p.duration(prefix+"hashTimeout", false)
	l.HashBytesPerSecond = p.bytes(prefix + "hashBytesPerSecond")
	switch v := p.value(prefix + "oversizedCopy"); v {
	case "fail":
		l.FailOversizedCopies = true
	case "warn":
	default:
		p.fail(prefix+"oversizedCopy", v, "is fail or warn")
	}
	if msgs := validation.IsDNS1123Label(l.JobNamespace); l.JobNamespace != "" && len(msgs) > 0 {
		p.fail(prefix+"jobNamespace", l.JobNamespace, "is not a namespace name: "+strings.Join(msgs, "; "))
	}
	if v := p.value(prefix + "fsGroup"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			p.fail(prefix+"fsGroup", v, "is not a group ID (0 or more)")
		}
		l.FSGroup = n
	}
	return l
}

// templateLimits reads the bounds of template rendering; the output bound
// is at most 16Mi, so that no setting lets one string cost the manager
// more than a small part of its memory.
func (p *parser) templateLimits() strtemplate.Limits {
	const prefix = "templates."
	out := p.bytes(prefix + "maxOutputBytes")
	if out > 16<<20 {
		p.fail(prefix+"maxOutputBytes", p.value(prefix+"maxOutputBytes"), "is over 16Mi")
	}
	return strtemplate.Limits{MaxOutputBytes: int(out), MaxSteps: p.positive(prefix + "maxSteps"),
		MaxRangeIterations: p.positive(prefix + "maxRangeIterations"), MaxFormatWidth: p.positive(prefix + "maxFormatWidth")}
}

func (p *parser) fail(key, value, problem string) {
	p.errs = append(p.errs, KeyError{Key: key, Value: value, Problem: problem})
}

func (p *parser) nonEmpty(key string) string {
	v := p.value(key)
	if v == "" {
		p.fail(key, v, "must not be empty")
	}
	return v
}

func (p *parser) boolean(key string) bool {
	v := p.value(key)
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.fail(key, v, "is not a boolean: use true or false")
	}
	return b
}

func (p *parser) quantity(key string) resource.Quantity {
	v := p.value(key)
	q, err := resource.ParseQuantity(v)
	if err != nil {
		p.fail(key, v, "is not a resource quantity (examples: 500m, 2, 512Mi, 2Gi)")
	}
	return q
}

func (p *parser) resources(prefix string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    p.quantity(prefix + "cpuRequest"),
			corev1.ResourceMemory: p.quantity(prefix + "memoryRequest"),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    p.quantity(prefix + "cpuLimit"),
			corev1.ResourceMemory: p.quantity(prefix + "memoryLimit"),
		},
	}
}

// modelcar reads the OCI model image keys.
func (p *parser) modelcar() storage.Modelcar {
	m := storage.Modelcar{Enabled: p.boolean("storageInitializer.enableModelcar")}
	switch mode := p.value("storageInitializer.ociModelMode"); mode {
	case storage.OCIModelcar, storage.OCINative, storage.OCIFetch:
		m.Mode = mode
	default:
		p.fail("storageInitializer.ociModelMode", mode, "is not an OCI model mode: use modelcar, native or fetch")
	}
	cpu, memory := p.quantity("storageInitializer.cpuModelcar"), p.quantity("storageInitializer.memoryModelcar")
	m.Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: memory},
	}
	if v := p.value("storageInitializer.uidModelcar"); v != "" {
		uid, err := strconv.ParseInt(v, 10, 64)
		if err != nil || uid < 0 {
			p.fail("storageInitializer.uidModelcar", v, "is not a user ID: use a whole number, or empty to keep the images' users")
		}
		m.UID = &uid
	}
	return m
}

// routerLimits reads the router's bounds.
func (p *parser) routerLimits() RouterLimits {
	return RouterLimits{
		MaxHeaderBytes:            p.bytes("router.maxHeaderBytes"),
		MaxRequestBodyBytes:       p.bytes("router.maxRequestBodyBytes"),
		MaxResponseBodyBytes:      p.bytes("router.maxResponseBodyBytes"),
		ReadHeaderTimeout:         p.duration("router.readHeaderTimeout", false),
		ReadTimeout:               p.duration("router.readTimeout", false),
		WriteTimeout:              p.duration("router.writeTimeout", false),
		IdleTimeout:               p.duration("router.idleTimeout", false),
		StepTimeout:               p.duration("router.stepTimeout", false),
		StepDialTimeout:           p.duration("router.stepDialTimeout", false),
		StepResponseHeaderTimeout: p.duration("router.stepResponseHeaderTimeout", true),
		MaxIdleConnsPerStep:       p.positive("router.maxIdleConnsPerStep"),
		MaxBufferedBytes:          p.bytes("router.maxBufferedBytes"),
		MaxConnections:            p.positive("router.maxConnections"),
		MaxConcurrentStreams:      p.positive("router.maxConcurrentStreams"),
	}
}

// bytes reads a size in bytes as a quantity (1Mi, 64Mi, 1048576), at least
// one byte.
func (p *parser) bytes(key string) int64 {
	v := p.value(key)
	q, err := resource.ParseQuantity(v)
	if err != nil || q.Sign() <= 0 {
		p.fail(key, v, "is not a size in bytes of at least 1 (examples: 1Mi, 64Mi, 1048576)")
		return 0
	}
	return q.Value()
}

// duration reads a Go duration (10s, 2m); zero only when allowed.
func (p *parser) duration(key string, zeroAllowed bool) time.Duration {
	v := p.value(key)
	d, err := time.ParseDuration(v)
	switch {
	case err != nil || d < 0:
		p.fail(key, v, "is not a duration (examples: 500ms, 10s, 2m)")
	case d == 0 && !zeroAllowed:
		p.fail(key, v, "must be longer than 0")
	}
	return d
}

// positive reads a whole number of at least 1.
func (p *parser) positive(key string) int {
	v := p.value(key)
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		p.fail(key, v, "is not a whole number of at least 1")
	}
	return n
}

// list reads a comma-separated list, without empty items.
func (p *parser) list(key string) []string {
	var out []string
	for _, item := range strings.Split(p.value(key), ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func (p *parser) rejectUnknown() {
	var keys []string
	for k := range p.data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := Defaults[k]; !ok {
			p.fail(k, p.data[k], "is not a serval-config key; see docs/configuration.md")
		}
	}
}
