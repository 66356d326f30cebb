// Package localmodel keeps models on the disks of node groups (KServe's
// model cache kinds). For every LocalModelCache and
// LocalModelNamespaceCache it writes one entry per node of its groups into
// that node's LocalModelNode, which the node agent (package nodeagent)
// downloads and deletes models by; it renders the volumes and claims the
// downloads and the model servers mount, and applies them through the one
// child pipeline (package pipeline); and it sums the agents' reports into
// each cache's status. For every LocalModelNodeGroup it reports the space
// its caches take and, when the agent is enabled, runs the agent on the
// group's nodes.
//
// The pure parts, which admission and the services that use a cache share,
// are here too: which cache a storage URI uses (Choose), whether a group
// has room for a cache (CheckRoom), and the names of the volumes.
package localmodel
