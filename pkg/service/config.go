package service

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/kelseyhightower/envconfig"

	"github.com/gatewire/gatewire/pkg/bus"
)

// Prefix is the prefix of every environment variable gatewire reads.
const Prefix = "GATEWIRE"

// Base is the configuration every service shares.
type Base struct {
	NATSURL          string `envconfig:"NATS_URL" default:"nats://127.0.0.1:4222" desc:"NATS server URL(s), comma-separated"`
	NATSCreds        string `envconfig:"NATS_CREDS" desc:"path of a NATS credentials file (JWT and seed)"`
	NATSNkeySeed     string `envconfig:"NATS_NKEY_SEED" desc:"path of the file holding this service's NATS user nkey seed (see gatewire nats-config)"`
	NATSTLSCA        string `envconfig:"NATS_TLS_CA" desc:"PEM file of the CA bundle that verifies the NATS servers; turns TLS on"`
	NATSTLSCert      string `envconfig:"NATS_TLS_CERT" desc:"PEM client certificate for NATS servers that verify clients (with NATS_TLS_KEY)"`
	NATSTLSKey       string `envconfig:"NATS_TLS_KEY" desc:"PEM key of NATS_TLS_CERT"`
	NATSReplicas     int    `envconfig:"NATS_REPLICAS" default:"1" desc:"copies a NATS cluster keeps of each bucket (3 in production)"`
	BusMaxValueBytes int64  `envconfig:"BUS_MAX_VALUE_BYTES" default:"67108864" desc:"largest bus value read, once decompressed (1 MiB to 256 MiB); writers refuse a quarter of it"`
	BusMaxBytes      int64  `envconfig:"BUS_MAX_BYTES" default:"1073741824" desc:"store budget of the buckets: each has its share, reserved on the NATS servers; 0 for no limits (a full store then refuses deletes too)"`
	System           string `envconfig:"SYSTEM" default:"gatewire" desc:"installation name; prefixes every bucket"`
	AdminAddress     string `envconfig:"ADMIN_ADDRESS" desc:"address of the admin server (/healthz /readyz /metrics)"`
	AdminPprof       bool   `envconfig:"ADMIN_PPROF" default:"false" desc:"also serve /debug/pprof on the admin server (profiles and the command line: for debugging only)"`
	LogLevel         string `envconfig:"LOG_LEVEL" default:"info" desc:"debug, info, warn or error"`
	LogFormat        string `envconfig:"LOG_FORMAT" default:"text" desc:"text or json"`
	Memory
}

// Validate checks the values; errors name the variable.
func (b Base) Validate() error {
	var errs []error
	for _, u := range strings.Split(b.NATSURL, ",") {
		if parsed, err := url.Parse(strings.TrimSpace(u)); err != nil || parsed.Host == "" {
			errs = append(errs, fmt.Errorf("%s_NATS_URL: %q is not a URL such as nats://127.0.0.1:4222", Prefix, u))
		}
	}
	errs = append(errs, b.validateNATS()...)
	errs = append(errs, b.Memory.Validate())
	if b.NATSReplicas < 1 || b.NATSReplicas > 5 {
		errs = append(errs, fmt.Errorf("%s_NATS_REPLICAS: %d: want 1 to 5", Prefix, b.NATSReplicas))
	}
	if b.BusMaxValueBytes != 0 && (b.BusMaxValueBytes < bus.MinValueBytes || b.BusMaxValueBytes > bus.MaxValueBytesCap) {
		errs = append(errs, fmt.Errorf("%s_BUS_MAX_VALUE_BYTES: %d: want %d to %d", Prefix, b.BusMaxValueBytes, bus.MinValueBytes, bus.MaxValueBytesCap))
	}
	if b.BusMaxBytes != 0 && b.BusMaxBytes < bus.MinMaxBytes {
		errs = append(errs, fmt.Errorf("%s_BUS_MAX_BYTES: %d: want 0 (no limits) or at least %d", Prefix, b.BusMaxBytes, bus.MinMaxBytes))
	}
	if b.System == "" || strings.ContainsAny(b.System, ". *>") {
		errs = append(errs, fmt.Errorf("%s_SYSTEM: %q: want letters, digits, '-' or '_'", Prefix, b.System))
	}
	if _, _, err := net.SplitHostPort(b.AdminAddress); err != nil {
		errs = append(errs, fmt.Errorf("%s_ADMIN_ADDRESS: %q: %v", Prefix, b.AdminAddress, err))
	}
	if _, err := parseLevel(b.LogLevel); err != nil {
		errs = append(errs, err)
	}
	if b.LogFormat != "text" && b.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("%s_LOG_FORMAT: %q: want text or json", Prefix, b.LogFormat))
	}
	return errors.Join(errs...)
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("%s_LOG_LEVEL: %q: want debug, info, warn or error", Prefix, s)
	}
	return l, nil
}

// BusOptions are the bus options of the base configuration: the system
// name, replicas and limits.
func (b Base) BusOptions() []bus.Option {
	opts := []bus.Option{bus.WithSystem(b.System), bus.WithReplicas(b.NATSReplicas), bus.WithMaxBytes(b.BusMaxBytes)}
	if b.BusMaxValueBytes != 0 {
		opts = append(opts, bus.WithMaxValueBytes(b.BusMaxValueBytes))
	}
	return opts
}

// Logger builds the process logger from the base configuration.
func (b Base) Logger() *slog.Logger {
	level, _ := parseLevel(b.LogLevel)
	opts := &slog.HandlerOptions{Level: level}
	if b.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// Validator is a configuration that checks itself.
type Validator interface{ Validate() error }

// Load fills each of cfgs (pointers to structs with envconfig tags) from the
// environment and validates it. Fields already set and not named by a
// variable or a default keep their value. An error that several
// configurations give (a setting they share, such as the controller name
// of pkg/gatewayclass) is reported once.
func Load(cfgs ...any) error {
	var errs []error
	seen := map[string]bool{}
	report := func(err error) {
		if err != nil && !seen[err.Error()] {
			seen[err.Error()] = true
			errs = append(errs, err)
		}
	}
	for _, cfg := range cfgs {
		if err := envconfig.Process(Prefix, cfg); err != nil {
			report(err)
			continue
		}
		if v, ok := cfg.(Validator); ok {
			report(v.Validate())
		}
	}
	return errors.Join(errs...)
}
