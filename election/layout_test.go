package election

import (
	"testing"
	"unsafe"
)

// TestHeartbeatLayout checks the layout Step's heartbeat path relies on:
// the fields it touches fill the Node's first five cache lines and the
// election timer starts on the sixth, and the leader's answers per peer,
// which a heartbeat's answer updates, are in the Node too (on 64-bit
// platforms).
func TestHeartbeatLayout(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the layout is planned for 64-bit platforms")
	}
	var n Node
	if off := unsafe.Offsetof(n.electionT); off != 5*64 {
		t.Errorf("election timer at offset %d, want %d", off, 5*64)
	}
	if size := unsafe.Sizeof(n); size != 9*64 {
		t.Errorf("Node is %d bytes, want %d (a size class of whole cache lines)", size, 9*64)
	}
	for name, f := range map[string]struct{ off, size uintptr }{
		"gate": {unsafe.Offsetof(n.gate), unsafe.Sizeof(n.gate)}, "contact": {unsafe.Offsetof(n.contact), unsafe.Sizeof(n.contact)},
		"fastBeats": {unsafe.Offsetof(n.fastBeats), unsafe.Sizeof(n.fastBeats)}, "parked": {unsafe.Offsetof(n.parked), unsafe.Sizeof(n.parked)},
		"leading": {unsafe.Offsetof(n.leading), unsafe.Sizeof(n.leading)}, "peerArr": {unsafe.Offsetof(n.peerArr), unsafe.Sizeof(n.peerArr)},
	} {
		if f.off+f.size > 64 {
			t.Errorf("%s at offset %d: TryHeartbeat's, SuperviseContact's and Leading's fields must fill the first cache line", name, f.off)
		}
	}
	// A leader's answers taken lock-free (TryHeartbeatResp) touch the
	// second line only, in groups of three voters.
	if lo, hi := unsafe.Offsetof(n.fastAnswers), unsafe.Offsetof(n.fastAcks)+2*unsafe.Sizeof(n.fastAcks[0]); lo < 64 || hi > 2*64 {
		t.Errorf("fastAnswers and two peers' fastAcks span [%d, %d), want them in [64, 128)", lo, hi)
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
