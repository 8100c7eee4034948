//go:build !unix

package outfile

import "errors"

// writeFD is not supported where descriptors are not named by paths.
func writeFD(int, string, []byte) error {
	return errors.New("writing to a file descriptor by its name is not supported on this system")
}
