package image

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
)

func parseTag(ref string) (name.Tag, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return name.Tag{}, fmt.Errorf("image reference %q: %w", ref, err)
	}
	return tag, nil
}
