// Package outfile writes a command's output to the path a user names with
// --out: atomically when the path is (or will be) a regular file, directly
// when it is a device, a pipe or an open file descriptor, and to standard
// output for "-".
//
// A temporary file and a rename make a regular file appear whole or not at
// all, so that a failed or killed run never leaves half a file behind. The
// same trick applied to anything else would be wrong: renaming over
// /dev/stdout or /dev/null replaces the device node (or the link to the
// process's descriptor) with a plain file, and renaming over a symlink
// replaces the link. So Write follows symbolic links to the file they name
// and decides there.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Stdout is the path that names standard output.
const Stdout = "-"

// maxLinks bounds the symbolic links Write follows, as the kernel's
// MAXSYMLINKS (40) does.
const maxLinks = 40

// newFileMode is the permission of a file Write creates.
const newFileMode = 0o644

// Error is a failure to write the output to Path.
type Error struct {
	// Path is the path as the caller gave it.
	Path string
	// Err says what went wrong, without the path.
	Err error
}

// Error returns "cannot write PATH: REASON".
func (e *Error) Error() string {
	name := e.Path
	if name == Stdout {
		name = "standard output"
	}
	return fmt.Sprintf("cannot write %s: %v", name, e.Err)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Write writes data to path:
//
//   - "-" is standard output: data goes to stdout;
//   - a path that names nothing yet, or a regular file, gets a temporary file
//     in the same directory, synced and then renamed over it (an existing
//     file keeps its permission bits, a new one gets 0644);
//   - a symbolic link is followed, link by link, to the path it names,
//     which is then written as above: the link stays a link;
//   - one of this process's open descriptors (/dev/stdout, /dev/fd/N,
//     /proc/self/fd/N) is written through that descriptor, so that the
//     bytes land where its other output goes (descriptor 1 is stdout);
//   - a character or block device, a named pipe, a socket, or another
//     process's descriptor is opened and written directly, never replaced;
//   - a directory is an error.
//
// Every error is an *Error naming path.
func Write(path string, data []byte, stdout io.Writer) error {
	if path == Stdout {
		if _, err := stdout.Write(data); err != nil {
			return &Error{Path: path, Err: bare(err)}
		}
		return nil
	}
	if path == "" {
		return &Error{Path: path, Err: errors.New("the path is empty")}
	}
	d, err := resolve(path)
	if err != nil {
		return &Error{Path: path, Err: err}
	}
	switch {
	case d.fd == 1:
		_, err = stdout.Write(data)
	case d.fd >= 0:
		err = writeFD(d.fd, d.path, data)
	case d.direct:
		err = writeDirect(d.path, data)
	default:
		err = writeAtomic(d.path, data)
	}
	if err != nil {
		return &Error{Path: path, Err: bare(err)}
	}
	return nil
}

// destination is where Write writes: a path, written through a rename
// unless direct is set, or one of this process's descriptors (fd >= 0).
type destination struct {
	path   string
	direct bool
	fd     int
}

// resolve follows path's symbolic links to its destination.
func resolve(path string) (destination, error) {
	p := path
	for range maxLinks {
		if fd, own, ok := descriptor(p); ok {
			if own {
				return destination{path: p, fd: fd}, nil
			}
			return destination{path: p, direct: true, fd: -1}, nil
		}
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return destination{path: p, fd: -1}, nil
		case err != nil:
			return destination{}, bare(err)
		case fi.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return destination{}, bare(err)
			}
			if !filepath.IsAbs(link) {
				link = filepath.Join(filepath.Dir(p), link)
			}
			p = link
		case fi.Mode().IsRegular():
			return destination{path: p, fd: -1}, nil
		case fi.IsDir():
			return destination{}, errors.New("it is a directory; name a file")
		default:
			return destination{path: p, direct: true, fd: -1}, nil
		}
	}
	return destination{}, fmt.Errorf("more than %d symbolic links", maxLinks)
}

// descriptor reports whether p names an open file descriptor: an entry of
// /proc/PID/fd (where /dev/stdout, /dev/fd and /proc/self/fd lead on
// Linux) or of a /dev/fd directory; own says it is this process's
// descriptor fd. Such a name may read as a regular file, but it is the
// descriptor's file that must be written, in place.
func descriptor(p string) (fd int, own, ok bool) {
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil || filepath.Base(dir) != "fd" {
		return 0, false, false
	}
	n, err := strconv.Atoi(filepath.Base(p))
	if err != nil || n < 0 {
		n = -1
	}
	switch {
	case dir == "/dev/fd" || dir == "/proc/self/fd" || dir == "/proc/"+strconv.Itoa(os.Getpid())+"/fd":
		return n, n >= 0, true
	case strings.HasPrefix(dir, "/proc/"):
		return n, false, true
	}
	return 0, false, false
}

// writeDirect opens an existing non-regular file (or a descriptor's) and
// writes data to it. O_APPEND keeps what a descriptor opened for appending
// already holds; a device or a pipe ignores it.
func writeDirect(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return bare(err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return bare(err)
	}
	return bare(f.Close())
}

// writeAtomic writes data to a synced temporary file in path's directory
// and renames it over path.
func writeAtomic(path string, data []byte) (err error) {
	mode := fs.FileMode(newFileMode)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), tempPattern(filepath.Base(path)))
	if err != nil {
		return bare(err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return bare(err)
	}
	if err = f.Chmod(mode); err != nil {
		return bare(err)
	}
	if err = f.Sync(); err != nil {
		return bare(err)
	}
	if err = f.Close(); err != nil {
		return bare(err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return bare(err)
	}
	return nil
}

// bare drops the operation and path of an *fs.PathError or *os.LinkError,
// which Error's message already names; nil stays nil.
func bare(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}

// maxTempPrefix is how many bytes of the output's name the temporary
// file's name keeps: with the dot, ".tmp-" and CreateTemp's random digits
// it stays well under the 255 bytes a name may have, so that any name the
// output itself may have can be written.
const maxTempPrefix = 32

// tempPattern is the os.CreateTemp pattern of the temporary file written
// beside the output named base: ".BASE.tmp-*", BASE cut to maxTempPrefix
// bytes.
func tempPattern(base string) string {
	if len(base) > maxTempPrefix {
		base = base[:maxTempPrefix]
	}
	return "." + base + ".tmp-*"
}
