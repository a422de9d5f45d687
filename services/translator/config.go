package translator

import (
	"fmt"
	"time"
)

// Config is the configuration of the translator service, loaded from the
// environment with the prefix GATEWIRE_ (see pkg/service).
type Config struct {
	// Debounce is how long the service gathers changes, from the first one,
	// before it translates the gateways they affect.
	Debounce time.Duration `envconfig:"TRANSLATOR_DEBOUNCE" default:"20ms" desc:"time to gather resource changes before translating the gateways they affect"`
	// WriteTimeout bounds one write to the bus; a write that times out
	// makes the service resync.
	WriteTimeout time.Duration `envconfig:"TRANSLATOR_WRITE_TIMEOUT" default:"10s" desc:"time allowed for one write to the bus"`
}

// DefaultConfig is the configuration with every default applied.
func DefaultConfig() Config {
	return Config{Debounce: 20 * time.Millisecond, WriteTimeout: 10 * time.Second}
}

// maxDebounce keeps changes from waiting unreasonably long.
const maxDebounce = 10 * time.Second

// Validate reports the first bad value, naming its environment variable.
func (c Config) Validate() error {
	if c.Debounce < 0 || c.Debounce > maxDebounce {
		return fmt.Errorf("GATEWIRE_TRANSLATOR_DEBOUNCE: %s is not between 0s and %s", c.Debounce, maxDebounce)
	}
	if c.WriteTimeout <= 0 {
		return fmt.Errorf("GATEWIRE_TRANSLATOR_WRITE_TIMEOUT: %s is not a positive duration", c.WriteTimeout)
	}
	return nil
}
