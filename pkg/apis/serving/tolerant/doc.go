// Package tolerant decodes Serval's API objects so that one stored object
// that does not decode never stops the others.
//
// The pod and container subtrees of Serval's CRDs are largely schemaless (to
// keep the CRDs small), so the API server can store a value Go cannot decode,
// such as `cpu: lots` in a field the guard schema does not reach, or in an
// object stored before the schema typed it. A list that fails to decode one
// item fails as a whole: a watch on the kind would never sync and no object
// of the kind would be reconciled. The API types' UnmarshalJSON methods use
// Decode instead: an object that does not decode keeps its metadata and
// status and carries the decode error, with the field's path, for the
// reconciler and the webhook to report.
package tolerant
