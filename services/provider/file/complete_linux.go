//go:build linux

package file

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// completions reports the files of the watched folders whose content is
// whole: closed after they were opened for writing (IN_CLOSE_WRITE), or
// renamed into a folder (IN_MOVED_TO). fsnotify reports neither apart
// from the events of a write in progress, so the provider would otherwise
// wait for every write to go quiet (settleDelay). It is a second inotify
// instance beside fsnotify's, on the same folders; it only shortens that
// wait, so an event it loses, or a folder it cannot watch, costs time,
// never a change.
type completions struct {
	fd    int
	file  *os.File // owns fd; closing it ends read
	names chan string

	mu     sync.Mutex
	dirs   map[int32]string // watch descriptor → folder
	closed bool
}

func newCompletions() (*completions, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	c := &completions{
		fd:    fd,
		file:  os.NewFile(uintptr(fd), "inotify"), // non-blocking: pollable, so Close ends a Read
		names: make(chan string, 256),
		dirs:  map[int32]string{},
	}
	go c.read()
	return c, nil
}

// Names delivers the path of each file whose writing completed. It is never
// closed; a nil completions delivers nothing.
func (c *completions) Names() <-chan string {
	if c == nil {
		return nil
	}
	return c.names
}

// add watches dir too. Adding a folder again is harmless.
func (c *completions) add(dir string) error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return os.ErrClosed
	}
	wd, err := unix.InotifyAddWatch(c.fd, dir, unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO|unix.IN_ONLYDIR)
	if err != nil {
		return &os.PathError{Op: "inotify_add_watch", Path: dir, Err: err}
	}
	c.dirs[int32(wd)] = dir
	return nil
}

func (c *completions) close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return c.file.Close()
}

// inotifyHeader is the size of struct inotify_event before its name.
const inotifyHeader = unix.SizeofInotifyEvent

// read decodes the kernel's events until the file is closed. A name the
// channel has no room for is dropped: its write is read after settleDelay.
func (c *completions) read() {
	buf := make([]byte, 64*(inotifyHeader+unix.NAME_MAX+1))
	for {
		n, err := c.file.Read(buf)
		if err != nil {
			return
		}
		for off := 0; off+inotifyHeader <= n; {
			wd := int32(binary.NativeEndian.Uint32(buf[off:]))
			mask := binary.NativeEndian.Uint32(buf[off+4:])
			end := off + inotifyHeader + int(binary.NativeEndian.Uint32(buf[off+12:]))
			if end > n {
				break
			}
			name := strings.TrimRight(string(buf[off+inotifyHeader:end]), "\x00")
			off = end
			c.mu.Lock()
			dir, ok := c.dirs[wd]
			if mask&unix.IN_IGNORED != 0 { // the folder is gone or no longer watched
				delete(c.dirs, wd)
			}
			c.mu.Unlock()
			if !ok || name == "" || mask&(unix.IN_CLOSE_WRITE|unix.IN_MOVED_TO) == 0 {
				continue
			}
			select {
			case c.names <- filepath.Join(dir, name):
			default:
			}
		}
	}
}
