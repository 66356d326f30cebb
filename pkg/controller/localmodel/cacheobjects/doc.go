// Package cacheobjects renders the objects the model cache kinds make: a
// cache's volumes and claims (one model folder per service namespace, and
// the download claims), and each node group's agent DaemonSet. The
// builders are pure; the names, labels and the download Job are in
// pkg/modelcache, which the node agent shares.
package cacheobjects
