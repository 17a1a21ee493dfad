package wheel

// Stopped reports whether Stop was called on w. Scheduling on a stopped
// wheel fails with ErrStopped, so code that creates long-lived timers (such
// as repeated.New) checks it to fail at construction rather than later.
// The Shared wheel is never stopped.
func (w *Wheel) Stopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopped
}
