package cmd

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// emit renders the output into memory and then writes it to stdout, or to
// the --out file atomically (a temporary file in the same directory, then a
// rename), so that a failed run never leaves half a file behind.
func (a *app) emit(render func(w io.Writer) error) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	if a.cfg.Out == "" {
		if _, err := a.stdout.Write(buf.Bytes()); err != nil {
			return fmt.Errorf("writing the output: %w", err)
		}
		return nil
	}
	return writeFileAtomic(a.cfg.Out, buf.Bytes())
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory and a rename. Bad paths are bad input.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return badInputf("--out %s: cannot write there: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("--out %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return badInputf("--out %s: %w", path, err)
	}
	return nil
}
