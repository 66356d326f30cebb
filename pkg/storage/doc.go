// Package storage turns a model's storage URI into what its pod needs: for
// gs://, s3://, http(s):// and hf:// a storage-initializer init container that
// downloads into an emptyDir at /mnt/models; for pvc:// the claim mounted
// there directly. Credentials (a storage-config Secret key, or the S3/GCS/HF
// Secrets of the component's ServiceAccount) go to the init container only.
package storage
