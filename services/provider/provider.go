// Package provider publishes Gateway API resources to the resources bucket,
// the input of the translator.
//
// It runs in one of two modes, chosen by GATEWIRE_PROVIDER_MODE:
//
//   - "file" (the default): the objects of a folder of YAML and JSON
//     manifests, GATEWIRE_PROVIDER_DIR, followed as files change (package
//     file; package manifest reads the files).
//   - "kubernetes": the objects of a Kubernetes cluster, with status written
//     back. Not implemented yet: New refuses it with ErrNotImplemented.
//
// Every mode writes busv1.Resource values under bus.ResourceKey keys and sets
// Resource.origin, "file:<path>:<line>" or "kubernetes", so that each mode
// deletes only the keys it wrote when it resyncs.
package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/gatewire/gatewire/pkg/bus"
	"github.com/gatewire/gatewire/services/provider/file"
	"github.com/gatewire/gatewire/services/provider/manifest"
)

// Modes of the provider.
const (
	ModeFile       = "file"
	ModeKubernetes = "kubernetes"
)

// ErrNotImplemented is returned by New for a mode this version cannot run.
var ErrNotImplemented = errors.New("not implemented yet")

// Config is the provider's configuration, loaded from the environment with
// the prefix GATEWIRE_.
type Config struct {
	Mode string `envconfig:"PROVIDER_MODE" default:"file" desc:"where resources come from: file (a folder of manifests) or kubernetes (not implemented yet)"`
	// Dir is relative to the working directory; the default suits running
	// from a checkout of the repository.
	Dir string `envconfig:"PROVIDER_DIR" default:"examples/quickstart" desc:"file mode: the folder of YAML/JSON manifests to publish, subfolders included"`
}

// Validate reports the first bad setting, naming its variable.
func (c Config) Validate() error {
	switch c.Mode {
	case ModeFile:
		if c.Dir == "" {
			return errors.New("GATEWIRE_PROVIDER_DIR: empty; name the folder of manifests to publish")
		}
		st, err := os.Stat(c.Dir)
		if err != nil {
			return fmt.Errorf("GATEWIRE_PROVIDER_DIR: %w", err)
		}
		if !st.IsDir() {
			return fmt.Errorf("GATEWIRE_PROVIDER_DIR: %s is not a folder", c.Dir)
		}
	case ModeKubernetes:
	default:
		return fmt.Errorf("GATEWIRE_PROVIDER_MODE: %q is not a mode; use %q or %q", c.Mode, ModeFile, ModeKubernetes)
	}
	return nil
}

// mode is what each mode of the provider implements.
type mode interface {
	Run(ctx context.Context) error
	Ready() bool
}

// Service is a running provider.
type Service struct {
	mode  mode
	files *file.Provider // nil outside file mode
}

// New returns the provider cfg describes, publishing to b. A nil log
// discards.
func New(cfg Config, b *bus.Bus, log *slog.Logger) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	switch cfg.Mode {
	case ModeKubernetes:
		return nil, fmt.Errorf("GATEWIRE_PROVIDER_MODE: the %s mode is %w; use %q", cfg.Mode, ErrNotImplemented, ModeFile)
	default:
		files, err := file.New(cfg.Dir, b, log.With("mode", ModeFile))
		if err != nil {
			return nil, err
		}
		return &Service{mode: files, files: files}, nil
	}
}

// Run publishes resources until ctx is done, then returns nil. It retries bus
// errors and resyncs on its own; an error means it cannot go on.
func (s *Service) Run(ctx context.Context) error { return s.mode.Run(ctx) }

// Ready reports whether the resources have been published once in full.
func (s *Service) Ready() bool { return s.mode.Ready() }

// Problems returns the current problems of the manifests in file mode (files
// that do not decode, objects defined twice), by path and line; nil in other
// modes. The caller owns the returned slice.
func (s *Service) Problems() []manifest.Problem {
	if s.files == nil {
		return nil
	}
	return s.files.Problems()
}
