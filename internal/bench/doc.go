// Package bench measures Serval at scale on a local cluster: `serval bench`
// creates N InferenceServices with 16 parallel workers on a fresh sandbox,
// with the manager binary running as a process of its own, and records how
// fast they go Ready, what the manager costs (peak RSS, CPU) and what it
// asks of the API server (requests by verb, reconciles, an idle minute).
// It then measures the floor on a second fresh sandbox: the same
// InferenceServices and the same children Serval made, created directly,
// with no operator. The ratio to the floor is the figure that matters: it
// says how much Serval adds to what Kubernetes itself costs.
package bench
