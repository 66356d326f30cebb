// Package nodeagent is the node agent of the model caches
// (cmd/serval-node-agent). One agent runs per node group on each of the
// group's nodes, with the group's disk mounted. It keeps the node's copies
// in step with the node's LocalModelNode: a download Job (the storage
// initializer, on this node, writing to the cache's claim) for each model
// not yet there, a bounded number of attempts when Jobs fail, the deletion
// of the folders no cache wants any more, and a status report with each
// model's state, size and digest and the disk's free space.
package nodeagent
