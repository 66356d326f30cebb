// Package standard builds the Standard-mode workload of a Component: a
// Deployment, a ClusterIP Service and, unless the autoscaler class is none or
// external, an autoscaling/v2 HorizontalPodAutoscaler. The builders are pure.
package standard
