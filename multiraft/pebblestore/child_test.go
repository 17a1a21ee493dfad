package pebblestore

import (
	"os"
	"os/exec"
	"syscall"
)

func newChild(dir string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillDuringWrites$")
	cmd.Env = append(os.Environ(), "PEBBLESTORE_CHILD="+dir)
	cmd.Stderr = os.Stderr
	return cmd
}

func errNoSpace() error { return syscall.ENOSPC }
