package manifest

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// DefaultMaxBytes is the size limit of one manifest when the caller sets
// none: 4 MiB, some hundred times a large Gateway with its routes.
const DefaultMaxBytes int64 = 4 << 20

// ErrTooLarge is the error of a manifest over its size limit.
var ErrTooLarge = errors.New("manifest too large")

// limit returns max, or DefaultMaxBytes when max is not positive.
func limit(max int64) int64 {
	if max <= 0 {
		return DefaultMaxBytes
	}
	return max
}

// ReadFile reads the manifest at path when it holds at most max bytes
// (DefaultMaxBytes when max <= 0). The size is checked before anything is
// read, and no more than max+1 bytes are read (a file that grows meanwhile),
// so a file of any size costs at most max bytes of memory. A file over the
// limit is an error wrapping ErrTooLarge that says its size and the limit.
func ReadFile(path string, max int64) ([]byte, error) {
	max = limit(max)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > max {
		return nil, tooLarge(st.Size(), max)
	}
	return ReadAll(f, path, max)
}

// ReadAll reads the manifest r, named name, as ReadFile does.
func ReadAll(r io.Reader, name string, max int64) ([]byte, error) {
	max = limit(max)
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%w: %s has more than %d bytes, the limit", ErrTooLarge, name, max)
	}
	return data, nil
}

func tooLarge(size, max int64) error {
	return fmt.Errorf("%w: %d bytes, over the limit of %d bytes", ErrTooLarge, size, max)
}
