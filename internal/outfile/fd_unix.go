//go:build unix

package outfile

import (
	"os"
	"syscall"
)

// writeFD writes data to this process's open descriptor fd through a
// duplicate, which shares its offset (so the bytes follow what was written
// there before) and can be closed without closing fd.
func writeFD(fd int, name string, data []byte) error {
	dup, err := syscall.Dup(fd)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(dup), name)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
