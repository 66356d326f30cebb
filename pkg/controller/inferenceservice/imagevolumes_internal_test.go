package inferenceservice

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/serval-dev/serval/pkg/controller/components"
)

func TestImageVolumesByVersion(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    components.ImageVolumes
		probe   bool
	}{
		{"v1.37.2", components.ImageVolumes{Supported: true}, false},
		{"v1.36.0-rc.1", components.ImageVolumes{Supported: true}, false},
		{"v1.35.4", components.ImageVolumes{}, true},
		{"v1.31.0", components.ImageVolumes{}, true},
		{"v1.30.9", components.ImageVolumes{Why: "Kubernetes v1.30.9 has no image volumes (they came in 1.31, behind the ImageVolume feature gate, GA in 1.36)"}, false},
		{"not a version", components.ImageVolumes{}, true},
	} {
		t.Run(tc.version, func(t *testing.T) {
			got, probe := imageVolumesByVersion(tc.version)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.probe, probe)
		})
	}
}
