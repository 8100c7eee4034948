//go:build unix

package outfile

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// entries returns the names in dir, to check that no temporary file is
// left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestWriteRegular covers the paths that end in a regular file (or in
// nothing yet): written whole through a rename, symbolic links kept and
// followed to their targets, permission bits kept.
func TestWriteRegular(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) (arg, target string)
		mode  fs.FileMode
		links []string // paths that must still be symbolic links
	}{
		{"new file", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "out.txt")
			return p, p
		}, 0o644, nil},
		{"existing file keeps its mode", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "out.txt")
			if err := os.WriteFile(p, []byte("old contents that are longer"), 0o600); err != nil {
				t.Fatal(err)
			}
			return p, p
		}, 0o600, nil},
		{"symlink to a file", func(t *testing.T, dir string) (string, string) {
			target := filepath.Join(dir, "real.txt")
			if err := os.WriteFile(target, []byte("old"), 0o640); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(dir, "link.txt")
			if err := os.Symlink("real.txt", link); err != nil {
				t.Fatal(err)
			}
			return link, target
		}, 0o640, []string{"link.txt"}},
		{"dangling symlink", func(t *testing.T, dir string) (string, string) {
			link := filepath.Join(dir, "link.txt")
			if err := os.Symlink(filepath.Join(dir, "new.txt"), link); err != nil {
				t.Fatal(err)
			}
			return link, filepath.Join(dir, "new.txt")
		}, 0o644, []string{"link.txt"}},
		{"chain of relative symlinks into a subdirectory", func(t *testing.T, dir string) (string, string) {
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("sub/b", filepath.Join(dir, "a")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("c.txt", filepath.Join(dir, "sub", "b")); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(dir, "a"), filepath.Join(dir, "sub", "c.txt")
		}, 0o644, []string{"a", "sub/b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			arg, target := tt.setup(t, dir)
			before := entries(t, dir)
			if err := Write(arg, []byte("plan output\n"), nil); err != nil {
				t.Fatalf("Write(%s): %v", arg, err)
			}
			got, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "plan output\n" {
				t.Errorf("%s holds %q", target, got)
			}
			fi, err := os.Lstat(target)
			if err != nil {
				t.Fatal(err)
			}
			if !fi.Mode().IsRegular() || fi.Mode().Perm() != tt.mode {
				t.Errorf("%s has mode %v, want a regular file with %v", target, fi.Mode(), tt.mode)
			}
			for _, l := range tt.links {
				if fi, err := os.Lstat(filepath.Join(dir, l)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("%s is no longer a symbolic link (%v, %v)", l, fi, err)
				}
			}
			after := entries(t, dir)
			for _, n := range after {
				if strings.Contains(n, ".tmp-") {
					t.Errorf("temporary file %s left behind (before %v, after %v)", n, before, after)
				}
			}
		})
	}
}

// TestWriteFIFO writes to a named pipe: it is written through, not
// replaced, and the reader gets the bytes.
func TestWriteFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, "to-pipe")
	if err := os.Symlink("pipe", link); err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{fifo, link} {
		got := make(chan []byte)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				got <- []byte(err.Error())
				return
			}
			b, _ := io.ReadAll(f)
			// Close before reporting: a read end still open when the
			// next Write opens the pipe would take that write, and the
			// next reader would wait for a writer forever.
			f.Close()
			got <- b
		}()
		if err := Write(arg, []byte("through the pipe\n"), nil); err != nil {
			t.Fatalf("Write(%s): %v", arg, err)
		}
		if b := <-got; string(b) != "through the pipe\n" {
			t.Errorf("%s: the reader got %q", arg, b)
		}
		fi, err := os.Lstat(fifo)
		if err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("%s: the pipe became %v (%v)", arg, fi.Mode(), err)
		}
	}
	if n := entries(t, dir); len(n) != 2 {
		t.Errorf("the directory holds %v, want the pipe and the link", n)
	}
}

// TestWriteFIFOFails writes more than a pipe holds to a named pipe whose
// reader goes away: the write fails and the error names the path.
func TestWriteFIFOFails(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	go func() {
		if f, err := os.Open(fifo); err == nil {
			f.Close()
		}
	}()
	err := Write(fifo, bytes.Repeat([]byte("x"), 4<<20), nil)
	var oe *Error
	if !errors.As(err, &oe) || oe.Path != fifo {
		t.Fatalf("Write to a closed pipe = %v, want an *Error for %s", err, fifo)
	}
	if !strings.HasPrefix(err.Error(), "cannot write "+fifo+": ") {
		t.Errorf("error %q does not name the path", err)
	}
}

// TestWriteDescriptor writes to a process's open descriptor through
// /proc/self/fd (what /dev/stdout leads to), reached by a symbolic link in
// a temporary directory: the bytes go down the descriptor and the link
// stays.
func TestWriteDescriptor(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dir := t.TempDir()
	link := filepath.Join(dir, "stdout")
	if err := os.Symlink("/proc/self/fd/"+strconv.Itoa(int(w.Fd())), link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("to the descriptor\n"), nil); err != nil {
		t.Fatalf("Write: %v", err)
	}
	w.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "to the descriptor\n" {
		t.Errorf("the pipe carried %q", got)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link became %v (%v)", fi, err)
	}
}

// errWriter fails every write.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// TestWriteStdoutAndErrors checks "-" and the paths that cannot be
// written: each error names the path (or standard output) and the reason.
func TestWriteStdoutAndErrors(t *testing.T) {
	var buf bytes.Buffer
	if err := Write("-", []byte("to stdout\n"), &buf); err != nil || buf.String() != "to stdout\n" {
		t.Errorf(`Write("-") = %v, stdout %q`, err, buf.String())
	}
	dir := t.TempDir()
	loop := filepath.Join(dir, "loop")
	if err := os.Symlink("loop", loop); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path string
		stdout     io.Writer
		want       string
	}{
		{"failing stdout", "-", errWriter{}, "cannot write standard output: broken pipe"},
		{"directory", dir, nil, "cannot write " + dir + ": it is a directory; name a file"},
		{"missing directory", filepath.Join(dir, "no", "such", "out.txt"), nil, "cannot write " + filepath.Join(dir, "no", "such", "out.txt") + ": no such file or directory"},
		{"symlink loop", loop, nil, "cannot write " + loop + ": more than 40 symbolic links"},
		{"empty path", "", nil, "cannot write : the path is empty"},
	} {
		err := Write(tt.path, []byte("x"), tt.stdout)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestWriteLongName: an output whose name is 240 to 255 bytes long, the
// most a name may have, is written: the temporary file's name is short.
func TestWriteLongName(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{240, 250, 255} {
		path := filepath.Join(dir, strings.Repeat("a", n-5)+".json")
		if err := Write(path, []byte("x\n"), nil); err != nil {
			t.Fatalf("Write of a %d-byte name: %v", n, err)
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != "x\n" {
			t.Errorf("%d-byte name: read %q, %v", n, got, err)
		}
	}
	if got, want := tempPattern(strings.Repeat("b", 300)), "."+strings.Repeat("b", 32)+".tmp-*"; got != want {
		t.Errorf("tempPattern = %q, want %q", got, want)
	}
}
