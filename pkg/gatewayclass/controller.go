// Package gatewayclass holds the one setting the provider and the
// translator must agree on: the controller name, the spec.controllerName of
// the GatewayClasses gatewire manages.
//
// The provider publishes (in Kubernetes mode) only the GatewayClasses that
// name it and owns the status entries that carry it; the translator
// translates only the Gateways of those classes and puts the name in every
// route and policy status it gives. Both read it from [Config], embedded in
// their configuration, so that one variable, GATEWIRE_CONTROLLER_NAME, sets
// it for both (and for gatewire standalone, which runs both):
//
//	GATEWIRE_CONTROLLER_NAME           the name (default DefaultControllerName)
//	GATEWIRE_PROVIDER_CONTROLLER_NAME  deprecated alias, read when the first is unset
//
// Setting both to different names is an error naming both variables: one of
// the services would otherwise ignore the classes the other serves. A name
// is what the Gateway API accepts in spec.controllerName: a domain-prefixed
// path such as "example.com/gateway-controller", at most 253 characters
// ([ValidateControllerName]).
package gatewayclass

import (
	"fmt"
	"log/slog"
	"regexp"
)

// DefaultControllerName is the controller name when none is configured;
// the GatewayClass in deploy/ and examples/ names it.
const DefaultControllerName = "gatewire.dev/gatewayclass-controller"

// The environment variables of the controller name.
const (
	ControllerNameEnv = "GATEWIRE_CONTROLLER_NAME"
	// DeprecatedControllerNameEnv is the provider's former variable, read
	// when ControllerNameEnv is unset.
	DeprecatedControllerNameEnv = "GATEWIRE_PROVIDER_CONTROLLER_NAME"
)

// Config is the controller-name setting, for embedding in a service's
// configuration (pkg/service.Load fills it from the environment). Its
// fields are what the variables hold, empty when unset; read the name
// with [Config.Controller].
type Config struct {
	ControllerName string `envconfig:"CONTROLLER_NAME" desc:"the spec.controllerName of the GatewayClasses gatewire manages, and the controllerName of the status entries it writes (default gatewire.dev/gatewayclass-controller)"`
	// DeprecatedControllerName is GATEWIRE_PROVIDER_CONTROLLER_NAME.
	DeprecatedControllerName string `envconfig:"PROVIDER_CONTROLLER_NAME" desc:"deprecated: use GATEWIRE_CONTROLLER_NAME"`
}

// Controller returns the configured controller name: ControllerName, else
// DeprecatedControllerName, else DefaultControllerName. It is valid once
// [Config.Validate] returned nil.
func (c Config) Controller() string {
	switch {
	case c.ControllerName != "":
		return c.ControllerName
	case c.DeprecatedControllerName != "":
		return c.DeprecatedControllerName
	}
	return DefaultControllerName
}

// WarnDeprecated logs a warning when the name comes from the deprecated
// variable only.
func (c Config) WarnDeprecated(log *slog.Logger) {
	if c.ControllerName == "" && c.DeprecatedControllerName != "" {
		log.Warn(DeprecatedControllerNameEnv+" is deprecated: set "+ControllerNameEnv+" instead",
			"controller_name", c.DeprecatedControllerName)
	}
}

// Validate checks that the two variables do not disagree and that the name
// is a valid controller name; errors name the variables.
func (c Config) Validate() error {
	if c.ControllerName != "" && c.DeprecatedControllerName != "" && c.ControllerName != c.DeprecatedControllerName {
		return fmt.Errorf("%s=%q and %s=%q differ: set only %s (the other is its deprecated alias)",
			ControllerNameEnv, c.ControllerName, DeprecatedControllerNameEnv, c.DeprecatedControllerName, ControllerNameEnv)
	}
	env := ControllerNameEnv
	if c.ControllerName == "" && c.DeprecatedControllerName != "" {
		env = DeprecatedControllerNameEnv
	}
	if err := ValidateControllerName(c.Controller()); err != nil {
		return fmt.Errorf("%s: %w", env, err)
	}
	return nil
}

// maxControllerName is the Gateway API's limit on spec.controllerName.
const maxControllerName = 253

// controllerName is the Gateway API's pattern of a GatewayController: a
// DNS subdomain, a slash, and a path.
var controllerName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$`)

// ValidateControllerName reports whether name is what the Gateway API
// accepts as a GatewayClass's spec.controllerName: a domain-prefixed path
// of at most 253 characters, such as "example.com/gateway-controller".
func ValidateControllerName(name string) error {
	if len(name) > maxControllerName || !controllerName.MatchString(name) {
		return fmt.Errorf("%q is not a domain-prefixed path of at most %d characters such as %q", name, maxControllerName, DefaultControllerName)
	}
	return nil
}
