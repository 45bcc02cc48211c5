package plugins

import (
	"fmt"
	"os"
	"path/filepath"
)

// maxSocketPath is the longest Unix socket path the platforms take (108
// bytes of sun_path on Linux, 104 on the BSDs and macOS, the terminating
// NUL included).
const maxSocketPath = 104 - 1

// socketName is the longest name go-plugin gives a socket inside its
// folder: "/plugin" and up to 10 digits (os.CreateTemp).
const socketName = len("/plugin") + 10

// socketDirPattern names the private folder of one call's socket.
const socketDirPattern = "onnxconv-plugin-*"

// socketTempDir makes the private folder of a plugin's socket. It goes in
// the temporary folder ($TMPDIR) when the socket's path fits the platform
// limit there; otherwise in the first of /tmp, /var/tmp and /dev/shm where
// it fits and can be made, so that a long TMPDIR does not stop every
// plugin from starting.
func socketTempDir() (string, error) {
	fits := func(base string) bool {
		// The folder made is base/onnxconv-plugin-NNNNNNNNNN.
		return len(filepath.Clean(base))+1+len(socketDirPattern)-1+10+socketName <= maxSocketPath
	}
	tmp := os.TempDir()
	if fits(tmp) {
		return os.MkdirTemp(tmp, socketDirPattern)
	}
	for _, base := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
		if !fits(base) {
			continue
		}
		if d, err := os.MkdirTemp(base, socketDirPattern); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("the temporary folder %s is %d bytes long, too long for the plugin's socket path (at most %d bytes), and none of /tmp, /var/tmp, /dev/shm is writable: set TMPDIR to a shorter folder",
		tmp, len(tmp), maxSocketPath)
}
