package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatewire/gatewire/pkg/gatewayclass"
	"github.com/gatewire/gatewire/pkg/testkit"
)

// renderings are the outputs every golden case is translated to, with the
// suffix of their golden file.
var renderings = []struct{ output, format, suffix string }{
	{"status", "yaml", ".status.yaml"},
	{"status", "json", ".status.json"},
	{"ir", "yaml", ".ir.yaml"},
	{"xds", "yaml", ".xds.yaml"},
}

// TestTranslateGolden runs gatewire translate on every
// testdata/translate/<case>.in.yaml in each output and compares the result
// with <case><suffix>; an input with problems is compared, once, with
// <case>.err.txt. Run go test -update to rewrite them, then review the diff.
func TestTranslateGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/translate/*.in.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases in testdata/translate: %v", err)
	}
	for _, in := range cases {
		base := strings.TrimSuffix(in, ".in.yaml")
		t.Run(filepath.Base(base), func(t *testing.T) {
			for _, r := range renderings {
				var stdout, stderr bytes.Buffer
				opts := translateOptions{inputs: inputs{in}, controller: gatewayclass.DefaultControllerName, output: r.output, format: r.format}
				err := translate(context.Background(), opts, nil, &stdout, &stderr)
				if err != nil {
					testkit.Golden(t, base+".err.txt", []byte(err.Error()+"\n"))
					return
				}
				testkit.Golden(t, base+r.suffix, stdout.Bytes())
			}
		})
	}
}

// TestTranslateInputs reads a folder (recursively, in path order, skipping
// hidden files and other extensions) and the standard input, and reports
// what cannot be read.
func TestTranslateInputs(t *testing.T) {
	dir := t.TempDir()
	small, err := os.ReadFile("testdata/translate/small.in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.SplitN(string(small), "\n---\n", 2)
	write := func(name, content string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b/rest.yml", parts[1])
	write(".hidden.yaml", "not: [valid")
	write("notes.txt", "not yaml")
	var want bytes.Buffer
	if err := translate(context.Background(), translateOptions{inputs: inputs{"testdata/translate/small.in.yaml"}, controller: gatewayclass.DefaultControllerName, output: "status", format: "yaml"}, nil, &want, io.Discard); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	opts := translateOptions{inputs: inputs{"-", dir, "-"}, controller: gatewayclass.DefaultControllerName, output: "status", format: "yaml"}
	if err := translate(context.Background(), opts, strings.NewReader(parts[0]), &got, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("stdin and a folder give another result than the same objects in one file:\n%s", got.String())
	}
	opts.inputs = inputs{filepath.Join(dir, "missing.yaml")}
	err = translate(context.Background(), opts, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "missing.yaml: stat ") {
		t.Errorf("a missing input: %v", err)
	}
}

// TestTranslateFlags checks the command line.
func TestTranslateFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no input"},
		{[]string{"-f", "x.yaml", "y.yaml"}, `unexpected arguments ["y.yaml"]`},
		{[]string{"-f", "x.yaml", "-output", "envoy"}, `-output "envoy": want one of status, ir, xds`},
		{[]string{"-f", "x.yaml", "-o", "toml"}, `-o "toml": want one of yaml, json`},
		{[]string{"-f", "x.yaml", "-controller-name", "gatewire"}, `-controller-name: "gatewire" is not a domain-prefixed path`},
	} {
		_, err := parseTranslateFlags(tc.args, io.Discard)
		if err == nil || !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want a usage error with %q", tc.args, err, tc.want)
		}
	}
	opts, err := parseTranslateFlags([]string{"-f", "a", "-f", "-", "-output", "xds", "-o", "json", "-v"}, io.Discard)
	if err != nil || len(opts.inputs) != 2 || opts.output != "xds" || opts.format != "json" || !opts.verbose ||
		opts.controller != gatewayclass.DefaultControllerName {
		t.Errorf("parsed %+v, %v", opts, err)
	}
	opts, err = parseTranslateFlags([]string{"-f", "a", "-controller-name", "example.com/gw"}, io.Discard)
	if err != nil || opts.controller != "example.com/gw" {
		t.Errorf("-controller-name: parsed %+v, %v", opts, err)
	}
}

// TestTranslateControllerName translates the small case for another
// controller name: its class, naming the default name, is then another
// controller's, and nothing gets a status; with the class naming the
// other name, the statuses are the golden ones with that name.
func TestTranslateControllerName(t *testing.T) {
	const other = "example.com/gateway-controller"
	small, err := os.ReadFile("testdata/translate/small.in.yaml")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/translate/small.status.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run := func(input string) string {
		t.Helper()
		var out bytes.Buffer
		opts := translateOptions{inputs: inputs{"-"}, controller: other, output: "status", format: "yaml"}
		if err := translate(context.Background(), opts, strings.NewReader(input), &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if got := run(string(small)); strings.Contains(got, "status:") {
		t.Errorf("the default class translated for %s:\n%s", other, got)
	}
	renamed := strings.ReplaceAll(string(small), gatewayclass.DefaultControllerName, other)
	if got, want := run(renamed), strings.ReplaceAll(string(golden), gatewayclass.DefaultControllerName, other); got != want {
		t.Errorf("the class naming %s: got\n%s\nwant\n%s", other, got, want)
	}
}
