package host

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ownerPrefix starts the first line of every bootstrap file; the gateway
// follows.
const ownerPrefix = "# gatewire-gateway: "

// tempPattern names the temporary files of writeFile; Prune removes leftovers
// of a crash.
const tempPattern = ".gatewire-*.tmp"

// header is the head of the bootstrap file of gateway (<namespace>/<name>).
func header(gateway string) []byte {
	return []byte(ownerPrefix + gateway + "\n" +
		"# Envoy bootstrap written by the gatewire infra service; edits are overwritten.\n")
}

// writeFile makes the file at path hold the bootstrap content of gateway. It
// writes nothing when the file already holds it, and refuses to overwrite a
// file that is not that gateway's. It reports whether it wrote.
func writeFile(path, gateway string, content []byte) (bool, error) {
	want := append(header(gateway), content...)
	have, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return false, fmt.Errorf("read bootstrap: %w", err)
	case bytes.Equal(have, want):
		return false, nil
	default:
		if owner := ownerOf(have); owner != gateway {
			return false, fmt.Errorf("bootstrap file %s belongs to %q, not to gateway %s; remove it or rename a gateway",
				path, owner, gateway)
		}
	}
	if err := writeAtomic(path, want); err != nil {
		return false, err
	}
	return true, nil
}

// writeAtomic replaces the file at path with data, so that a reader sees the
// old or the new content, never a part.
func writeAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, tempPattern)
	if err != nil {
		return fmt.Errorf("write bootstrap: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("write bootstrap %s: %w", f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("write bootstrap %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write bootstrap %s: %w", f.Name(), err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("write bootstrap %s: %w", f.Name(), err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write bootstrap: %w", err)
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable where the platform supports it.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// fileOwner returns the gateway named on the first line of the file at path,
// "" when the file has no such line.
func fileOwner(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return "", nil
	}
	return ownerOf([]byte(line)), nil
}

// ownerOf returns the gateway named on the first line of data, or "".
func ownerOf(data []byte) string {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	owner, ok := strings.CutPrefix(string(line), ownerPrefix)
	if !ok {
		return ""
	}
	return strings.TrimSpace(owner)
}

// Prune removes the bootstrap files (and stops the Envoys) of the gateways for
// which keep returns false, and the temporary files of an interrupted write.
// Files without the gatewire-gateway line are not touched.
func (p *Provisioner) Prune(_ context.Context, keep func(namespace, name string) bool) error {
	entries, err := os.ReadDir(p.opts.Dir)
	if err != nil {
		return fmt.Errorf("prune bootstraps: %w", err)
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Join(p.opts.Dir, e.Name())
		if e.IsDir() {
			if strings.HasSuffix(e.Name(), certDirSuffix) {
				errs = append(errs, p.pruneCertDir(path))
			}
			continue
		}
		if ok, _ := filepath.Match(tempPattern, e.Name()); ok {
			errs = append(errs, removeIfExists(path))
			continue
		}
		if filepath.Ext(e.Name()) == ".yaml" {
			errs = append(errs, p.pruneFile(path, keep))
		}
	}
	return errors.Join(errs...)
}

func (p *Provisioner) pruneFile(path string, keep func(namespace, name string) bool) error {
	owner, err := fileOwner(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("prune bootstraps: %w", err)
	}
	ns, name, ok := strings.Cut(owner, "/")
	if owner == "" || !ok {
		return nil // not a gatewire bootstrap
	}
	if keep(ns, name) && p.Path(ns, name) == path {
		return nil
	}
	return p.remove(path, owner)
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}
