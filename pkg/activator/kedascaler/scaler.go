// Package kedascaler serves the activator's demand to KEDA through KEDA's
// external scaler API in push mode: a ScaledObject whose trigger is
// external-push, with scalerAddress the activator's and the metadata
// service naming the component's workload Service, is active while the
// component holds or forwards a request, and reports those requests as
// its metric, so KEDA scales 0→1 the moment one waits.
package kedascaler

import (
	"context"
	"fmt"
	"strconv"

	"github.com/kedacore/keda/v2/pkg/scalers/externalscaler"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/serval-dev/serval/pkg/activator"
)

// MetricName is the metric the scaler reports: the component's held and
// in-flight requests.
const MetricName = "serval-activator-requests"

// The trigger's metadata keys.
const (
	// ServiceKey names the component's workload Service, in the
	// ScaledObject's namespace (a ScaledObject asks about its own
	// namespace only).
	ServiceKey = "service"
	// TargetKey is the requests one replica takes (1 when unset): KEDA
	// runs demand/target replicas.
	TargetKey = "targetRequests"
)

// Demand is what the scaler reads of the activator.
type Demand interface {
	Demand(activator.Key) int
	Watch(activator.Key) (<-chan struct{}, func())
}

// Scaler implements KEDA's ExternalScaler service.
type Scaler struct {
	externalscaler.UnimplementedExternalScalerServer
	Demand Demand
}

// Register adds the scaler to a gRPC server.
func Register(s *grpc.Server, d Demand) {
	externalscaler.RegisterExternalScalerServer(s, &Scaler{Demand: d})
}

// keyOf is the component a ScaledObject asks about.
func keyOf(ref *externalscaler.ScaledObjectRef) (activator.Key, error) {
	if ref == nil || ref.ScalerMetadata[ServiceKey] == "" {
		return activator.Key{}, status.Error(codes.InvalidArgument, "the trigger's metadata names no "+ServiceKey)
	}
	return activator.Key{Namespace: ref.Namespace, Name: ref.ScalerMetadata[ServiceKey]}, nil
}

// IsActive says whether the component has a request held or in flight.
func (s *Scaler) IsActive(_ context.Context, ref *externalscaler.ScaledObjectRef) (*externalscaler.IsActiveResponse, error) {
	key, err := keyOf(ref)
	if err != nil {
		return nil, err
	}
	return &externalscaler.IsActiveResponse{Result: s.Demand.Demand(key) > 0}, nil
}

// StreamIsActive pushes the component's activity whenever it changes,
// the first time at once.
func (s *Scaler) StreamIsActive(ref *externalscaler.ScaledObjectRef, stream grpc.ServerStreamingServer[externalscaler.IsActiveResponse]) error {
	key, err := keyOf(ref)
	if err != nil {
		return err
	}
	changes, stop := s.Demand.Watch(key)
	defer stop()
	last, first := false, true
	for {
		if active := s.Demand.Demand(key) > 0; first || active != last {
			if err := stream.Send(&externalscaler.IsActiveResponse{Result: active}); err != nil {
				return err
			}
			last, first = active, false
		}
		select {
		case <-stream.Context().Done():
			return nil
		case <-changes:
		}
	}
}

// GetMetricSpec is the metric and the requests one replica takes.
func (s *Scaler) GetMetricSpec(_ context.Context, ref *externalscaler.ScaledObjectRef) (*externalscaler.GetMetricSpecResponse, error) {
	if _, err := keyOf(ref); err != nil {
		return nil, err
	}
	target := int64(1)
	if v := ref.ScalerMetadata[TargetKey]; v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return nil, status.Error(codes.InvalidArgument, fmt.Sprintf("%s %q is not a whole number of at least 1", TargetKey, v))
		}
		target = n
	}
	return &externalscaler.GetMetricSpecResponse{MetricSpecs: []*externalscaler.MetricSpec{
		{MetricName: MetricName, TargetSize: target, TargetSizeFloat: float64(target)}}}, nil
}

// GetMetrics is the component's held and in-flight requests.
func (s *Scaler) GetMetrics(_ context.Context, req *externalscaler.GetMetricsRequest) (*externalscaler.GetMetricsResponse, error) {
	key, err := keyOf(req.GetScaledObjectRef())
	if err != nil {
		return nil, err
	}
	n := s.Demand.Demand(key)
	return &externalscaler.GetMetricsResponse{MetricValues: []*externalscaler.MetricValue{
		{MetricName: MetricName, MetricValue: int64(n), MetricValueFloat: float64(n)}}}, nil
}
