package inferencegraph

import (
	"strconv"
	"strings"
	"time"

	"github.com/serval-dev/serval/pkg/apis/serving/v1alpha1"
	"github.com/serval-dev/serval/pkg/config"
)

// routerArgs are the router's flags for serval-config's router section and
// the manager's graph limits: every bound is passed explicitly, so what
// the Deployment shows is what the router enforces.
func routerArgs(r config.Router, limits v1alpha1.GraphLimits) []string {
	l := r.Limits
	size := func(flag string, n int64) string { return "--" + flag + "=" + strconv.FormatInt(n, 10) }
	duration := func(flag string, d time.Duration) string { return "--" + flag + "=" + d.String() }
	args := []string{
		size("max-header-bytes", l.MaxHeaderBytes),
		size("max-request-body-bytes", l.MaxRequestBodyBytes),
		size("max-response-body-bytes", l.MaxResponseBodyBytes),
		duration("server-read-header-timeout", l.ReadHeaderTimeout),
		duration("server-read-timeout", l.ReadTimeout),
		duration("server-write-timeout", l.WriteTimeout),
		duration("server-idle-timeout", l.IdleTimeout),
		duration("step-timeout", l.StepTimeout),
		duration("step-dial-timeout", l.StepDialTimeout),
		duration("step-response-header-timeout", l.StepResponseHeaderTimeout),
		size("max-idle-conns-per-step", int64(l.MaxIdleConnsPerStep)),
		size("max-buffered-bytes", l.MaxBufferedBytes),
		size("max-connections", int64(l.MaxConnections)),
		size("max-concurrent-streams", int64(l.MaxConcurrentStreams)),
	}
	if limits.MaxDepth > 0 {
		args = append(args, size("max-depth", int64(limits.MaxDepth)))
	}
	if limits.MaxStepCalls > 0 {
		args = append(args, size("max-step-calls", int64(limits.MaxStepCalls)))
	}
	if len(r.PropagateHeaders) > 0 {
		args = append(args, "--propagate-headers="+strings.Join(r.PropagateHeaders, ","))
	}
	return args
}
