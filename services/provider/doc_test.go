package provider_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryPackageHasADoc fails when a package of the module has no package
// doc comment in any of its non-test files.
func TestEveryPackageHasADoc(t *testing.T) {
	err := filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			return err
		}
		documented, sources := false, 0
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			sources++
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			documented = documented || f.Doc != nil
		}
		if sources > 0 && !documented {
			t.Errorf("the package in %s has no package doc", dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
