//go:build linux

package wheel

import (
	"os"
	"syscall"
	"unsafe"
)

// The Go runtime sleeps a goroutine to the millisecond: its network poller
// waits in epoll_wait, whose timeout is in whole milliseconds, so a sleep
// of 50µs or 300µs ends about a millisecond after it began, and one of
// 1.3ms about 2.2ms after. On Linux a busy driver (see napMinBatch)
// therefore sleeps on a timerfd instead, read through the runtime's network poller: the poller
// wakes when the timerfd expires, within the kernel's timer slack (50µs
// by default), and the driver's goroutine parks meanwhile like one
// waiting for a socket, holding no thread.

// A napper is the driver's timerfd; nil where none can be made (the
// driver then sleeps with the runtime's timers).
type napper struct {
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

// newNapper returns a napper, or nil if the system refuses a timerfd.
func newNapper() *napper {
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, clockMonotonic, tfdNonblock|tfdCloexec, 0)
	if errno != 0 {
		return nil
	}
	f := os.NewFile(fd, "raftick-wheel-timerfd")
	if f == nil {
		syscall.Close(int(fd))
		return nil
	}
	return &napper{f: f, fd: fd}
}

// arm makes the timerfd expire ns from now (ns <= 0: at once), or never
// (ns == never). It may be called from any goroutine.
func (n *napper) arm(ns int64) {
	var spec itimerspec
	switch {
	case ns == never:
		// zero: disarmed
	case ns <= 0:
		spec.value.Nsec = 1
	default:
		spec.value = syscall.NsecToTimespec(ns)
	}
	syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, n.fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
}

// wait parks the calling goroutine until the timerfd expires. It reports
// false if the timerfd failed (the driver then stops using it).
func (n *napper) wait() bool {
	_, err := n.f.Read(n.buf[:])
	return err == nil
}

func (n *napper) close() { n.f.Close() }
