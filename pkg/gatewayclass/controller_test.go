package gatewayclass_test

import (
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/service"
)

func TestControllerFromTheEnvironment(t *testing.T) {
	for _, c := range []struct {
		name, value, alias string
		want, err          string
	}{
		{name: "unset", want: gatewayclass.DefaultControllerName},
		{name: "set", value: "example.com/gw", want: "example.com/gw"},
		{name: "alias only", alias: "example.com/old", want: "example.com/old"},
		{name: "both, equal", value: "example.com/gw", alias: "example.com/gw", want: "example.com/gw"},
		{name: "both, different", value: "example.com/gw", alias: "example.com/old",
			err: `GATEWIRE_CONTROLLER_NAME="example.com/gw" and GATEWIRE_PROVIDER_CONTROLLER_NAME="example.com/old" differ`},
		{name: "no path", value: "gatewire", err: `GATEWIRE_CONTROLLER_NAME: "gatewire" is not a domain-prefixed path`},
		{name: "alias, no domain", alias: "/controller", err: `GATEWIRE_PROVIDER_CONTROLLER_NAME: "/controller" is not a domain-prefixed path`},
		{name: "upper-case domain", value: "Example.com/gw", err: `GATEWIRE_CONTROLLER_NAME: "Example.com/gw"`},
		{name: "too long", value: "example.com/" + strings.Repeat("a", 242), err: "at most 253 characters"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(gatewayclass.ControllerNameEnv, c.value)
			t.Setenv(gatewayclass.DeprecatedControllerNameEnv, c.alias)
			var cfg gatewayclass.Config
			err := service.Load(&cfg)
			switch {
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v, want one with %q", err, c.err)
			case c.err == "" && err != nil:
				t.Fatal(err)
			case c.err == "" && cfg.Controller() != c.want:
				t.Fatalf("Controller() = %q, want %q", cfg.Controller(), c.want)
			}
		})
	}
}

func TestValidateControllerName(t *testing.T) {
	for _, ok := range []string{gatewayclass.DefaultControllerName, "example.com/a/b", "a/x", "gateway.example.com/ctrl~1"} {
		if err := gatewayclass.ValidateControllerName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "gatewire", "example.com/", "-example.com/x", "example..com/x", "example.com/a b", "example.com"} {
		if err := gatewayclass.ValidateControllerName(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}
