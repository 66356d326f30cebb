package storage

import (
	"encoding/json"
	"fmt"
	"strings"
)

// StorageSpecKey is the storage-config key that storage: {key, path,
// parameters} reads, as KServe resolves it: the given key; else
// "default_<type>" when the parameters name a type; else "default".
func StorageSpecKey(key string, parameters map[string]string) string {
	switch {
	case key != "":
		return key
	case parameters["type"] != "":
		return "default_" + parameters["type"]
	}
	return defaultStorageKey
}

// URIFromStorageSpec builds the storage URI of a model given as storage:
// {key, path, parameters} with no storageUri, as KServe does: the entry's
// JSON in the storage-config Secret (data, by key) names the type and the
// bucket, the parameters override them, and the path is appended:
// {type}://{bucket}/{path}. secretName is for messages.
func URIFromStorageSpec(secretName string, data map[string][]byte, key, path string, parameters map[string]string) (string, error) {
	raw, ok := data[key]
	if !ok {
		return "", fmt.Errorf("the storage-config Secret %s has no key %q, which storage.key (or its default) names", secretName, key)
	}
	entry := map[string]any{}
	if err := json.Unmarshal(raw, &entry); err != nil {
		return "", fmt.Errorf("key %q of Secret %s is not a JSON object: %v", key, secretName, err)
	}
	value := func(name string) string {
		if v := parameters[name]; v != "" {
			return v
		}
		s, _ := entry[name].(string)
		return s
	}
	storageType, bucket := strings.ToLower(value("type")), value("bucket")
	switch storageType {
	case "s3", "gs":
	case "":
		return "", fmt.Errorf("key %q of Secret %s names no type; set \"type\": \"s3\" or \"gs\" there or in storage.parameters", key, secretName)
	default:
		return "", fmt.Errorf("storage type %q (key %q of Secret %s) is not supported by Serval; use s3 or gs, or give storageUri", storageType, key, secretName)
	}
	if bucket == "" {
		return "", fmt.Errorf("key %q of Secret %s names no bucket; set \"bucket\" there or in storage.parameters", key, secretName)
	}
	return storageType + "://" + bucket + "/" + strings.TrimPrefix(path, "/"), nil
}
