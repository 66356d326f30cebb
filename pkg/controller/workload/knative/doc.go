// Package knative builds the Knative-mode workload of a Component: one
// serving.knative.dev Service, built as Unstructured from scratch (Knative
// ships no apply configurations), and reads its Ready, ConfigurationsReady
// and RoutesReady conditions, revisions and traffic back.
package knative
