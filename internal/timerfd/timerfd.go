// Package timerfd is a sleep that ends on time: a Linux timerfd read
// through the Go runtime's network poller. The runtime sleeps a
// goroutine to the millisecond (its poller waits in epoll_wait, whose
// timeout is in whole milliseconds), so a time.Timer of 50µs or 300µs
// ends about a millisecond after it began; a timerfd wakes the poller
// within the kernel's timer slack (50µs by default), and the goroutine
// waiting on it parks like one waiting for a socket, holding no thread.
// Elsewhere New returns nil and the caller sleeps with the runtime's
// timers.
package timerfd

import "math"

// Never is the arming that never expires.
const Never = int64(math.MaxInt64)
