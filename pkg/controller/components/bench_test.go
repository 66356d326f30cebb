package components

import (
	"testing"

	"github.com/serval-dev/serval/pkg/config"
)

// BenchmarkBuild resolves a predictor (runtime merge, placeholders, storage
// initializer, credentials) and a transformer.
func BenchmarkBuild(b *testing.B) {
	in := goldenCases()["transformer"]
	in.Config = config.Default()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(in); err != nil {
			b.Fatal(err)
		}
	}
}
