package testenv

import (
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// MetricSum reads a metric of the manager's registry (controller-runtime's,
// which Serval's metrics join): the sum of the counter and gauge values of
// the series of that name whose labels include every one of labels. found
// is false when no series matches.
func MetricSum(name string, labels map[string]string) (sum float64, found bool, err error) {
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		return 0, false, err
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			matched := 0
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v == l.GetValue() {
					matched++
				}
			}
			if matched == len(labels) {
				sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
				found = true
			}
		}
	}
	return sum, found, nil
}
