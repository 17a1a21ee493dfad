package raftmix

import (
	"testing"
	"time"
)

// TestPhases checks how phases files elections and step-downs: by where
// they fall against the burn's actual start and end, into the second of
// the window they fall in, and the latest election; none before the
// window starts or after it ends.
func TestPhases(t *testing.T) {
	p := newPhases(Config{Duration: 30 * time.Second})
	if len(p.perSec) != 30 {
		t.Fatalf("%d counts per second for a 30s window, want 30", len(p.perSec))
	}
	p.election() // before the window: ignored
	p.burnStart.Store(int64(10 * time.Second))
	p.burnEnd.Store(int64(20 * time.Second))
	t0 := time.Unix(1000, 0)
	p.start.Store(t0.UnixNano())
	var now time.Time
	p.now = func() time.Time { return now }
	at := func(d time.Duration) { now = t0.Add(d) }
	at(5 * time.Second)
	p.election()
	p.stepDown()
	at(15 * time.Second)
	p.election()
	p.election()
	at(25*time.Second + 500*time.Millisecond)
	p.election()
	at(12 * time.Second)
	p.election()                  // later in the burn, earlier in the window: not the last
	p.stall(3 * time.Millisecond) // in the burn
	at(5 * time.Second)
	p.stall(2 * time.Millisecond)
	p.stall(time.Millisecond)
	p.done.Store(true)
	p.election() // after the window: ignored
	p.stall(time.Second)

	for k, want := range [numPhases]int64{1, 3, 1} {
		if got := p.elections[k].Load(); got != want {
			t.Errorf("%s: %d elections, want %d", PhaseNames[k], got, want)
		}
	}
	for k, want := range [numPhases]time.Duration{2 * time.Millisecond, 3 * time.Millisecond, 0} {
		if got := time.Duration(p.stalls[k].Load()); got != want {
			t.Errorf("%s: longest stall %v, want %v", PhaseNames[k], got, want)
		}
	}
	if got := p.stepDowns[phaseBefore].Load(); got != 1 {
		t.Errorf("%d step-downs before, want 1", got)
	}
	for k, want := range map[int]int64{5: 1, 12: 1, 15: 2, 25: 1} {
		if got := p.perSec[k].Load(); got != want {
			t.Errorf("second %d: %d elections, want %d", k, got, want)
		}
	}
	if last, want := time.Duration(p.lastElection.Load()), 25*time.Second+500*time.Millisecond; last != want {
		t.Errorf("last election at %v, want %v", last, want)
	}
}
