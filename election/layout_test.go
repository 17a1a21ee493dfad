package election

import (
	"testing"
	"unsafe"
)

// TestHeartbeatLayout checks the layout Step's heartbeat path relies on:
// the fields it touches fill the Node's first three cache lines and the
// election timer starts on the fourth, and the leader's answers per peer,
// which a heartbeat's answer updates, are in the Node too (on 64-bit
// platforms).
func TestHeartbeatLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the layout is planned for 64-bit platforms")
	}
	var n Node
	if off := unsafe.Offsetof(n.electionT); off != 3*64 {
		t.Errorf("election timer at offset %d, want %d", off, 3*64)
	}
	if size := unsafe.Sizeof(n); size != 7*64 {
		t.Errorf("Node is %d bytes, want %d (a size class of whole cache lines)", size, 7*64)
	}
	for name, off := range map[string]uintptr{
		"mu": unsafe.Offsetof(n.mu), "term": unsafe.Offsetof(n.term),
		"tr": unsafe.Offsetof(n.tr), "peerArr": unsafe.Offsetof(n.peerArr),
		"promised": unsafe.Offsetof(n.promised), "outbox": unsafe.Offsetof(n.outbox),
		"events": unsafe.Offsetof(n.events),
	} {
		if off >= unsafe.Offsetof(n.electionT) {
			t.Errorf("%s at offset %d, after the election timer", name, off)
		}
	}
}
