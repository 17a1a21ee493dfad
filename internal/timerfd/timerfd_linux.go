//go:build linux

package timerfd

import (
	"os"
	"syscall"
	"unsafe"
)

// A Timer is a timerfd. Arm may be called from any goroutine; one
// goroutine at a time waits.
type Timer struct {
	f   *os.File
	fd  uintptr
	buf [8]byte
}

type itimerspec struct{ interval, value syscall.Timespec }

const (
	clockMonotonic = 1
	tfdNonblock    = syscall.O_NONBLOCK
	tfdCloexec     = syscall.O_CLOEXEC
)

// New returns a disarmed Timer, or nil if the system refuses a timerfd.
func New() *Timer {
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdNonblock|tfdCloexec, 0)
	if errno != 0 {
		return nil
	}
	f := os.NewFile(fd, "raftick-timerfd")
	if f == nil {
		syscall.Close(int(fd))
		return nil
	}
	return &Timer{f: f, fd: fd}
}

// Arm makes the timer expire ns from now (ns <= 0: at once), or never
// (ns == Never), replacing the previous arming.
func (t *Timer) Arm(ns int64) {
	var spec itimerspec
	switch {
	case ns == Never:
		// zero: disarmed
	case ns <= 0:
		spec.value.Nsec = 1
	default:
		spec.value = syscall.NsecToTimespec(ns)
	}
	syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, t.fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
}

// Wait parks the calling goroutine until the timer expires (at once if
// it expired since the last Wait). It reports false if the timer failed
// or was closed.
func (t *Timer) Wait() bool {
	_, err := t.f.Read(t.buf[:])
	return err == nil
}

// Close releases the timer; a Wait in progress returns false.
func (t *Timer) Close() { t.f.Close() }
