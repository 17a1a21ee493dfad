package wheel

import "github.com/raftick/raftick/internal/timerfd"

// The Go runtime sleeps a goroutine to the millisecond, so a sleep of
// 50µs or 300µs ends about a millisecond after it began, and one of 1.3ms
// about 2.2ms after. On Linux a busy driver (see napMinBatch) therefore
// sleeps on a timerfd instead (internal/timerfd), read through the
// runtime's network poller: it wakes within the kernel's timer slack
// (50µs by default), and the driver's goroutine parks meanwhile like one
// waiting for a socket, holding no thread. Elsewhere it sleeps with the
// runtime's timers.

// A napper is the driver's timerfd; nil where none can be made (the
// driver then sleeps with the runtime's timers).
type napper struct{ t *timerfd.Timer }

// newNapper returns a napper, or nil if the system refuses a timerfd.
func newNapper() *napper {
	t := timerfd.New()
	if t == nil {
		return nil
	}
	return &napper{t}
}

// arm makes the timerfd expire ns from now (ns <= 0: at once), or never
// (ns == never). It may be called from any goroutine.
func (n *napper) arm(ns int64) {
	if ns == never {
		ns = timerfd.Never
	}
	n.t.Arm(ns)
}

// wait parks the calling goroutine until the timerfd expires. It reports
// false if the timerfd failed (the driver then stops using it).
func (n *napper) wait() bool { return n.t.Wait() }

func (n *napper) close() { n.t.Close() }
