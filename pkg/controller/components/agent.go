package components

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/serval-dev/serval/pkg/apis/serving/v1beta1"
	"github.com/serval-dev/serval/pkg/config"
)

// The agent sidecar, as KServe injects it for a logger or a batcher.
const (
	// AgentContainerName names the sidecar.
	AgentContainerName = "agent"
	// AgentPort is where the agent listens; the component's Service sends
	// its traffic there, and the agent passes it on to the model server.
	AgentPort int32 = 9081
	// readinessProbeEnv carries the model server's readiness probe to the
	// agent, which runs it (KServe's agent reads this variable).
	readinessProbeEnv = "SERVING_READINESS_PROBE"
)

// addAgent puts KServe's agent in front of the component's first container
// when it has a logger or a batcher, wired as KServe wires it: the agent
// listens on AgentPort, which the Service targets, and proxies to the
// serving port; the model server's readiness probe moves to the agent.
func addAgent(c *Component, isvc *v1beta1.InferenceService, cfg *config.Config) error {
	logger, err := v1beta1.LoggerOf(&c.Extension)
	if err != nil {
		return &BuildError{c.Type, v1beta1.InvalidPredictorSpec, "logger " + err.Error()}
	}
	batcher, err := v1beta1.BatcherOf(&c.Extension)
	if err != nil {
		return &BuildError{c.Type, v1beta1.InvalidPredictorSpec, "batcher " + err.Error()}
	}
	if logger == nil && batcher == nil {
		return nil
	}
	for _, ct := range c.Pod.Containers {
		if ct.Name == AgentContainerName {
			return &BuildError{c.Type, v1beta1.InvalidPredictorSpec, fmt.Sprintf(
				"the container name %s is reserved for the logger and batcher sidecar", AgentContainerName)}
		}
	}
	server := &c.Pod.Containers[0]
	port := c.ServingPort()
	probe := server.ReadinessProbe
	if probe == nil {
		probe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}}}
	}
	probeJSON, err := json.Marshal(probe)
	if err != nil {
		return fmt.Errorf("encode the readiness probe of %s: %w", c.Name, err)
	}
	server.ReadinessProbe = nil
	var args []string
	if logger != nil {
		args = append(args, loggerArgs(c, isvc, logger, cfg.Agent)...)
	}
	if batcher != nil {
		size, latency := cfg.Agent.MaxBatchSize, cfg.Agent.MaxLatency
		if batcher.MaxBatchSize != nil {
			size = *batcher.MaxBatchSize
		}
		if batcher.MaxLatency != nil {
			latency = *batcher.MaxLatency
		}
		args = append(args, "--enable-batcher", "--max-batchsize", strconv.Itoa(size), "--max-latency", strconv.Itoa(latency))
	}
	args = append(args, "--port", strconv.Itoa(int(AgentPort)), "--component-port", strconv.Itoa(int(port)))
	c.Pod.Containers = append(c.Pod.Containers, corev1.Container{
		Name:      AgentContainerName,
		Image:     cfg.Agent.Image,
		Args:      args,
		Ports:     []corev1.ContainerPort{{Name: "agent-port", ContainerPort: AgentPort, Protocol: corev1.ProtocolTCP}},
		Env:       []corev1.EnvVar{{Name: readinessProbeEnv, Value: string(probeJSON)}},
		Resources: *cfg.Agent.Resources.DeepCopy(),
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
			Port: intstr.FromInt32(AgentPort), HTTPHeaders: []corev1.HTTPHeader{{Name: "K-Network-Probe", Value: "queue"}}}}},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
	})
	c.AgentPort = AgentPort
	return nil
}

// loggerArgs are the agent's logger flags, as KServe passes them.
func loggerArgs(c *Component, isvc *v1beta1.InferenceService, l *v1beta1.LoggerSpec, a config.Agent) []string {
	url := a.LoggerDefaultURL
	if l.URL != nil {
		url = *l.URL
	}
	mode := l.Mode
	if mode == "" {
		mode = v1beta1.LogAll
	}
	args := []string{"--log-url", url, "--source-uri", "http://" + c.Name + "." + c.Namespace(), "--log-mode", string(mode),
		"--inference-service", isvc.Name, "--namespace", isvc.Namespace, "--endpoint", "", "--component", string(c.Type)}
	if len(l.MetadataHeaders) > 0 {
		args = append(args, "--metadata-headers", strings.Join(l.MetadataHeaders, ","))
	}
	if len(l.MetadataAnnotations) > 0 {
		var kv []string
		for _, k := range l.MetadataAnnotations {
			if v, ok := isvc.Annotations[k]; ok {
				kv = append(kv, k+"="+v)
			}
		}
		args = append(args, "--metadata-annotations", strings.Join(kv, ","))
	}
	return args
}
