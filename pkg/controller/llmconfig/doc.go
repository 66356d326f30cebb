// Package llmconfig keeps the LLMInferenceServiceConfigs (presets): their
// status (Ready, ConfigInUse, the services that use them) and their
// finalizer, which holds the deletion of a preset until no service uses
// it, as KServe does.
package llmconfig
