package main

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/gatewire/gatewire/pkg/manifest"
)

// stdinPath names the standard input as -f; stdinName names it in messages.
const (
	stdinPath = "-"
	stdinName = "<stdin>"
)

// inputs is the -f flag: files, folders and "-", in the order given.
type inputs []string

func (in *inputs) String() string { return strings.Join(*in, ",") }

func (in *inputs) Set(v string) error {
	if v == "" {
		return errors.New("empty path")
	}
	*in = append(*in, v)
	return nil
}

// maxInputBytes is the size limit of one input: manifest.DefaultMaxBytes.
const maxInputBytes = 0

// manifestExtensions are the file extensions read in a folder, as the file
// provider reads them.
var manifestExtensions = map[string]bool{".yaml": true, ".yml": true, ".json": true}

// expand returns the files to read for one -f value: the file itself (any
// name), or the manifests of a folder and its subfolders in path order,
// skipping names that start with ".".
func expand(path string) ([]string, error) {
	if path == stdinPath {
		return []string{path}, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case p != path && strings.HasPrefix(d.Name(), "."):
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		case !d.IsDir() && manifestExtensions[strings.ToLower(filepath.Ext(p))]:
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// readInputs reads and decodes every input (stdin once at most) and returns
// the objects in input order, or every problem found: files that cannot be
// read, documents that do not decode or that the API server would refuse,
// and objects defined twice. Files are read and decoded on up to GOMAXPROCS
// goroutines; done, when not nil, counts the files finished, and total is
// set to the number of files once they are listed.
func readInputs(paths []string, stdin io.Reader, done, total *atomic.Int64) ([]manifest.Object, []manifest.Problem) {
	var files []string
	var problems []manifest.Problem
	readStdin := false
	for _, p := range paths {
		expanded, err := expand(p)
		if err != nil {
			problems = append(problems, manifest.Problem{Path: p, Message: err.Error()})
			continue
		}
		for _, f := range expanded {
			if f == stdinPath && readStdin {
				continue
			}
			readStdin = readStdin || f == stdinPath
			files = append(files, f)
		}
	}
	if total != nil {
		total.Store(int64(len(files)))
	}
	results := make([]decoded, len(files))
	manifest.Parallel(len(files), func(i int) {
		results[i] = decodeInput(files[i], stdin)
		if done != nil {
			done.Add(1)
		}
	})
	var objects []manifest.Object
	for _, r := range results {
		objects, problems = append(objects, r.objects...), append(problems, r.problems...)
	}
	return objects, append(problems, manifest.Duplicates(objects)...)
}

// decoded is what one input file holds.
type decoded struct {
	objects  []manifest.Object
	problems []manifest.Problem
}

// decodeInput reads and decodes one file, or the standard input.
func decodeInput(f string, stdin io.Reader) decoded {
	data, err := readFile(f, stdin)
	if err != nil {
		return decoded{problems: []manifest.Problem{{Path: f, Message: err.Error()}}}
	}
	name := f
	if f == stdinPath {
		name = stdinName
	}
	objs, probs := manifest.Decode(name, data)
	return decoded{objects: objs, problems: probs}
}

func readFile(path string, stdin io.Reader) ([]byte, error) {
	if path == stdinPath {
		return manifest.ReadAll(stdin, stdinName, maxInputBytes)
	}
	return manifest.ReadFile(path, maxInputBytes)
}
