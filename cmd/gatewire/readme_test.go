package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/service"
)

var readmeRow = regexp.MustCompile("(?m)^\\| `(GATEWIRE_[A-Z0-9_]+)` \\|([^|]*)\\|")

// TestREADMEListsEveryVariable checks that the README's tables have a row
// for every variable a service or standalone mode reads, with its
// default: what `<binary> -h` lists.
func TestREADMEListsEveryVariable(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, m := range readmeRow.FindAllStringSubmatch(string(data), -1) {
		rows[m[1]] = m[2]
	}
	cfg := &configs{}
	for _, v := range service.Variables(cfg.all()...) {
		row, ok := rows[v.Name]
		switch {
		case !ok:
			t.Errorf("README.md has no row for %s", v.Name)
		case v.Default != "" && !strings.Contains(row, "`"+v.Default+"`"):
			t.Errorf("README.md gives %s the default %q, the code %q", v.Name, strings.TrimSpace(row), v.Default)
		}
	}
}
