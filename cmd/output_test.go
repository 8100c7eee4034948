//go:build unix

package cmd

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutPaths runs `plan models` with --out naming standard output, a
// symbolic link, a named pipe and paths that cannot be written, in a
// temporary directory (no test touches /dev).
func TestOutPaths(t *testing.T) {
	clearEnv(t)
	dir := t.TempDir()
	t.Chdir(dir)
	want, _, code := run(t, "models", "llama3-8b")
	if code != ExitOK || want == "" {
		t.Fatalf("plan models llama3-8b: exit %d, %q", code, want)
	}

	t.Run("dash is stdout", func(t *testing.T) {
		stdout, stderr, code := run(t, "models", "llama3-8b", "--out", "-")
		if code != ExitOK || stdout != want {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		if _, err := os.Lstat(filepath.Join(dir, "-")); err == nil {
			t.Error(`--out - created a file named "-"`)
		}
	})

	t.Run("symlink", func(t *testing.T) {
		if err := os.Symlink("target.txt", "link.txt"); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := run(t, "models", "llama3-8b", "--out", "link.txt")
		if code != ExitOK || stdout != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		got, err := os.ReadFile("target.txt")
		if err != nil || string(got) != want {
			t.Errorf("target.txt holds %q (%v)", got, err)
		}
		if fi, err := os.Lstat("link.txt"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("link.txt is no longer a link: %v %v", fi, err)
		}
	})

	t.Run("fifo", func(t *testing.T) {
		if err := syscall.Mkfifo("pipe", 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		got := make(chan string)
		go func() {
			f, err := os.Open("pipe")
			if err != nil {
				got <- err.Error()
				return
			}
			defer f.Close()
			b, _ := io.ReadAll(f)
			got <- string(b)
		}()
		stdout, stderr, code := run(t, "models", "llama3-8b", "--out", "pipe")
		if code != ExitOK || stdout != "" {
			t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		if g := <-got; g != want {
			t.Errorf("the pipe's reader got %q", g)
		}
		if fi, err := os.Lstat("pipe"); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("the pipe became %v (%v)", fi, err)
		}
	})

	if err := os.Mkdir("adir", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"directory", []string{"models", "llama3-8b", "--out", "adir"},
			"plan: --out: cannot write adir: it is a directory; name a file\n"},
		{"missing directory", []string{"models", "llama3-8b", "--out", "no/such/dir/out.txt"},
			"plan: --out: cannot write no/such/dir/out.txt: no such file or directory\n"},
		{"calibrate profile to stdout", []string{"calibrate", "--cluster", "a100-16", "--out", "-"},
			"plan: --out - would send the fitted profile to standard output, where the report goes; name a file for the profile\n"},
		{"sweep into stdout", []string{"sweep", "--config", "x.yaml", "--out", "-"},
			"plan: --out - names standard output, but plan sweep writes a directory of files: name a directory\n"},
		{"merge twice to stdout", []string{"merge", "adir", "--summary", "-"},
			"plan: --summary - and the merged cells (no --out, or --out -) would both go to standard output; give one of them a file\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := run(t, tt.args...)
			if code != ExitBadInput || stdout != "" || stderr != tt.want {
				t.Errorf("plan %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(tt.args, " "), code, stdout, stderr, tt.want)
			}
		})
	}
}
