package testkit

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Tree is the import path every gatewire module starts with.
const Tree = "github.com/gatewire/gatewire/"

// ServiceImports are the parts of the tree a service may import besides its
// own module: the shared packages and the generated protos. The services
// talk over the bus only, so none imports another.
var ServiceImports = []string{Tree + "pkg", Tree + "proto"}

// Conventions are the rules that hold for every package of one module.
// One test per module calls Check; the rules are:
//
//   - every package with non-test, non-generated Go files has a package doc
//     comment in one of them;
//   - when Imports is set, no file of the module (tests included) imports a
//     package of the tree outside the module itself and Imports;
//   - every log call names an error under the key [ErrorKey];
//   - every package with tests has a TestMain, and its tests call
//     goleak.VerifyTestMain, so that a test that leaves a goroutine running
//     fails. A leak that cannot be fixed is ignored there with
//     goleak.IgnoreTopFunction and a comment that says why.
type Conventions struct {
	// Root is the folder of the module's go.mod, relative to the test's
	// working directory ("." for a test at the root of the module).
	Root string
	// Imports are the module paths (or package path prefixes) of the tree
	// the module may import besides its own; nil leaves imports unchecked.
	Imports []string
	// Exceptions are imports outside Imports that are known and due to go,
	// each with the reason it is still there: package path → reason.
	Exceptions map[string]string
}

// pkgFiles are the parsed Go files of one folder.
type pkgFiles struct {
	sources []*ast.File // non-test, non-generated
	tests   []*ast.File
	all     []*ast.File
}

// rule is what one convention found wrong.
type rule struct {
	name     string
	problems []string
}

// Check runs every rule on the module, each as a subtest.
func (c Conventions) Check(t *testing.T) {
	t.Helper()
	module := modulePath(t, c.Root)
	pkgs := parseModule(t, c.Root)
	if len(pkgs) == 0 {
		t.Fatalf("no Go package under %s", c.Root)
	}
	rules := []rule{{"package docs", docProblems(pkgs)}, {"goleak", leakProblems(pkgs)}, {"error key", errorKeyProblems(pkgs)}}
	if c.Imports != nil {
		rules = append(rules, rule{"imports", importProblems(pkgs, module, c.Imports, c.Exceptions)})
	}
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			for _, p := range r.problems {
				t.Error(p)
			}
		})
	}
}

// modulePath reads the module line of root/go.mod.
func modulePath(t *testing.T, root string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatalf("the module root: %v", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if p, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(p), `"`)
		}
	}
	t.Fatalf("%s/go.mod has no module line", root)
	return ""
}

// parseModule parses every Go file of the module by folder, leaving out
// testdata, hidden folders and nested modules.
func parseModule(t *testing.T, root string) map[string]*pkgFiles {
	t.Helper()
	pkgs := map[string]*pkgFiles{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return skipDir(root, path, d.Name())
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		p := pkgs[dir]
		if p == nil {
			p = &pkgFiles{}
			pkgs[dir] = p
		}
		p.all = append(p.all, f)
		switch {
		case strings.HasSuffix(path, "_test.go"):
			p.tests = append(p.tests, f)
		case !ast.IsGenerated(f):
			p.sources = append(p.sources, f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func skipDir(root, path, name string) error {
	if path == root {
		return nil
	}
	if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return filepath.SkipDir
	}
	if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
		return filepath.SkipDir // a module of its own, checked by its own test
	}
	return nil
}
