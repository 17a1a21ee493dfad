//go:build linux

package realtime

import (
	"os"
	"syscall"
	"time"
	"unsafe"
)

// The Go runtime sleeps to the millisecond (its poller waits in
// epoll_wait), so a time.Timer of 300µs ends about 1ms later. The
// carrier sleeps on a timerfd read through the runtime's poller instead:
// it wakes within the kernel's timer slack (50µs by default). (The
// wheel's busy driver naps the same way: wheel/nap_linux.go.)
type sleeper struct {
	f   *os.File // nil: the system refused a timerfd; fallback is used
	fd  uintptr
	buf [8]byte
	fb  *timerSleeper
}

type itimerspec struct{ interval, value syscall.Timespec }

func newSleeper() sleeper {
	fd, _, errno := syscall.Syscall(syscall.SYS_TIMERFD_CREATE, 1 /* CLOCK_MONOTONIC */, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errno != 0 {
		return sleeper{fb: newTimerSleeper()}
	}
	f := os.NewFile(fd, "raftsim-realtime-timerfd")
	if f == nil {
		syscall.Close(int(fd))
		return sleeper{fb: newTimerSleeper()}
	}
	return sleeper{f: f, fd: fd}
}

// arm makes wait return d from now (d <= 0: at once; never: not before
// the next arm). Any goroutine may call it.
func (s *sleeper) arm(d time.Duration) {
	if s.fb != nil {
		s.fb.arm(d)
		return
	}
	var spec itimerspec
	switch {
	case d == never:
	case d <= 0:
		spec.value.Nsec = 1
	default:
		spec.value = syscall.NsecToTimespec(int64(d))
	}
	syscall.Syscall6(syscall.SYS_TIMERFD_SETTIME, s.fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
}

// wait parks until the arming expires; false once the sleeper is closed.
func (s *sleeper) wait() bool {
	if s.fb != nil {
		return s.fb.wait()
	}
	_, err := s.f.Read(s.buf[:])
	return err == nil
}

func (s *sleeper) close() {
	if s.fb != nil {
		s.fb.close()
		return
	}
	s.f.Close()
}
