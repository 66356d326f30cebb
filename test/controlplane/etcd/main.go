// Command etcd is the upstream etcd server at the version pinned in go.mod.
// It lives in a module of its own because its dependencies differ from the
// ones Kubernetes pins.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
