package kube

import (
	"errors"
	"testing"

	busv1 "github.com/gatewire/gatewire/proto/gatewire/bus/v1"
)

func TestCheckMetadataRefusesWhatTheAPIServerWould(t *testing.T) {
	for name, proxy := range map[string]*busv1.Proxy{
		"label key":        {Labels: map[string]string{"not a key": "x"}},
		"label value":      {Labels: map[string]string{"team": "not a value"}},
		"annotation key":   {Annotations: map[string]string{"/x": "y"}},
		"label key prefix": {Labels: map[string]string{"Example.com/x": "y"}},
	} {
		if err := checkMetadata(proxy); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: checkMetadata = %v, want ErrInvalid", name, err)
		}
	}
	ok := &busv1.Proxy{Labels: map[string]string{"example.com/team": "web"}, Annotations: map[string]string{"note": "any text at all"}}
	if err := checkMetadata(ok); err != nil {
		t.Errorf("valid metadata: %v", err)
	}
}
