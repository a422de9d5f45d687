package main

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/service"
)

// envVar is a variable a configuration reads and its default.
type envVar struct{ name, def string }

// envVars lists the variables of a configuration struct, as envconfig
// reads them: embedded structs included.
func envVars(t reflect.Type) []envVar {
	var out []envVar
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, envVars(f.Type)...)
			continue
		}
		if name := f.Tag.Get("envconfig"); name != "" {
			out = append(out, envVar{name: service.Prefix + "_" + name, def: f.Tag.Get("default")})
		}
	}
	return out
}

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
	for _, c := range cfg.all() {
		for _, v := range envVars(reflect.TypeOf(c).Elem()) {
			row, ok := rows[v.name]
			switch {
			case !ok:
				t.Errorf("README.md has no row for %s", v.name)
			case v.def != "" && !strings.Contains(row, "`"+v.def+"`"):
				t.Errorf("README.md gives %s the default %q, the code %q", v.name, strings.TrimSpace(row), v.def)
			}
		}
	}
}
