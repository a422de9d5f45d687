package manifest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoYAML calls visit with the path and the bytes of every YAML file of
// the repository (inputs, golden outputs, CRDs, deployments, examples),
// hidden folders such as .git left out.
func repoYAML(t *testing.T, visit func(path string, data []byte)) {
	t.Helper()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case e.IsDir() && strings.HasPrefix(e.Name(), ".") && path != root:
			return filepath.SkipDir
		case e.IsDir() || !strings.HasSuffix(path, ".yaml"):
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		visit(path, data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
