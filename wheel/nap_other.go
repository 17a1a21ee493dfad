//go:build !linux

package wheel

// Elsewhere the driver sleeps with the runtime's timers (see
// nap_linux.go).
type napper struct{}

func newNapper() *napper    { return nil }
func (n *napper) arm(int64) {}
func (n *napper) wait() bool {
	return false
}
func (n *napper) close() {}
