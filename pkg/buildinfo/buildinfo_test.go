package buildinfo_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/buildinfo"
)

// TestUnstamped checks what a test binary, which no Makefile stamped,
// reports.
func TestUnstamped(t *testing.T) {
	if got := buildinfo.Version(); got != "dev" {
		t.Errorf("Version() = %q, want dev", got)
	}
	if got := buildinfo.Commit(); got == "" {
		t.Error("Commit() is empty, want a hash or unknown")
	}
}

// TestStamped builds a program with the linker flags the Makefile passes
// and checks that it reports them.
func TestStamped(t *testing.T) {
	dir := t.TempDir()
	main := `package main

import (
	"fmt"

	"github.com/gatewire/gatewire/pkg/buildinfo"
)

func main() { fmt.Println(buildinfo.Version(), buildinfo.Commit()) }
`
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
	const pkg = "github.com/gatewire/gatewire/pkg/buildinfo"
	bin := filepath.Join(dir, "stamped")
	cmd := exec.Command("go", "build", "-o", bin,
		"-ldflags", "-s -w -X "+pkg+".version=v9.8.7-1-gabcdef0 -X "+pkg+".commit=abcdef0123", src)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), "v9.8.7-1-gabcdef0 abcdef0123"; got != want {
		t.Errorf("stamped binary prints %q, want %q", got, want)
	}
}
