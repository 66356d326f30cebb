package testenv

import (
	"k8s.io/client-go/rest"
)

// AsServiceAccount is cfg acting as the ServiceAccount namespace/name,
// with the groups the API server gives a ServiceAccount's token: for tests
// of what an account's rights and the admission policies let it do.
func AsServiceAccount(cfg *rest.Config, namespace, name string) *rest.Config {
	return AsUser(cfg, "system:serviceaccount:"+namespace+":"+name, "system:serviceaccounts", "system:serviceaccounts:"+namespace)
}

// AsUser is cfg acting as the user, in groups and system:authenticated.
func AsUser(cfg *rest.Config, user string, groups ...string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(groups, "system:authenticated")}
	return c
}
