// Package resourcestest loads manifests into a resources.Index for tests,
// through the decoder the provider and gatewire translate use
// (pkg/manifest): the objects are checked as the Kubernetes API server would
// check them, defaulted and normalized, so a test sees what production sees.
package resourcestest

import (
	"fmt"
	"io"

	"github.com/gatewire/gatewire/pkg/manifest"
	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
	"github.com/gatewire/gatewire/services/translator/resources"
)

// Load reads the manifest r, named origin in errors, and returns an Index
// of its objects (see manifest.ReadResources). Any problem is an error.
func Load(r io.Reader, origin string) (*resources.Index, error) {
	return load(r, origin, manifest.Options{MaxBytes: maxBytes})
}

// maxBytes is the size limit of a manifest loaded by a test: benchmarks
// load 10,000 routes in one manifest, above the provider's limit for a file.
const maxBytes = 256 << 20

// LoadAll is Load keeping the objects the API server would refuse
// (manifest.Options.KeepRefused): for the golden cases, which check the
// translator's own answer to such objects.
func LoadAll(r io.Reader, origin string) (*resources.Index, error) {
	return load(r, origin, manifest.Options{KeepRefused: true, MaxBytes: maxBytes})
}

// DecodeAll returns the Resources of the manifest r as LoadAll reads them.
func DecodeAll(r io.Reader, origin string) ([]*busv1.Resource, error) {
	return manifest.ReadResourcesWith(r, origin, manifest.Options{KeepRefused: true, MaxBytes: maxBytes})
}

func load(r io.Reader, origin string, o manifest.Options) (*resources.Index, error) {
	rs, err := manifest.ReadResourcesWith(r, origin, o)
	if err != nil {
		return nil, err
	}
	x := resources.NewIndex()
	for _, res := range rs {
		if _, err := x.Apply(res); err != nil {
			return nil, fmt.Errorf("%s: %w", res.GetOrigin(), err)
		}
	}
	return x, nil
}
