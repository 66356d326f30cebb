// Package credentials reads the storage credentials a model download needs:
// the Secrets a ServiceAccount lists, by name, remembered for a short while.
package credentials
