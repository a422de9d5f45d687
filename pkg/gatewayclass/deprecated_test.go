package gatewayclass_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
)

// TestWarnDeprecated checks that only a name taken from the deprecated
// variable is warned about.
func TestWarnDeprecated(t *testing.T) {
	for _, c := range []struct {
		cfg  gatewayclass.Config
		warn bool
	}{
		{gatewayclass.Config{}, false},
		{gatewayclass.Config{ControllerName: "example.com/a"}, false},
		{gatewayclass.Config{ControllerName: "example.com/a", DeprecatedControllerName: "example.com/a"}, false},
		{gatewayclass.Config{DeprecatedControllerName: "example.com/a"}, true},
	} {
		var buf bytes.Buffer
		c.cfg.WarnDeprecated(slog.New(slog.NewTextHandler(&buf, nil)))
		got := strings.Contains(buf.String(), "GATEWIRE_PROVIDER_CONTROLLER_NAME is deprecated")
		if got != c.warn {
			t.Errorf("%+v: warned %v, want %v (log %q)", c.cfg, got, c.warn, buf.String())
		}
	}
}
