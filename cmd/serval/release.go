//go:build release

package main

import "github.com/spf13/cobra"

// developerCommands: the image's CLI has none (see developer.go).
func developerCommands() []*cobra.Command { return nil }
