package wheel

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/raftick/raftick/internal/testseed"
	"github.com/stretchr/testify/require"
)

var (
	casesFlag = flag.Int("cases", 3000, "number of random cases in TestModel")
)

// The reference model: a list of pending timers; firing picks the minimum
// (deadline, sequence) by linear scan.
type modelTimer struct {
	pending bool
	when    int64
	seq     uint64
}

type model struct {
	now    int64
	seq    uint64
	timers []modelTimer
}

func (m *model) deadline(d time.Duration) int64 {
	if d <= 0 {
		return m.now
	}
	if int64(d) > maxWhen-m.now {
		return maxWhen
	}
	return m.now + int64(d)
}

func (m *model) reset(i int, d time.Duration) bool {
	was := m.timers[i].pending
	m.seq++
	m.timers[i] = modelTimer{pending: true, when: m.deadline(d), seq: m.seq}
	return was
}

func (m *model) stop(i int) bool {
	was := m.timers[i].pending
	m.timers[i].pending = false
	return was
}

func (m *model) next() (int, bool) {
	best := -1
	for i, t := range m.timers {
		if !t.pending {
			continue
		}
		if best < 0 || t.when < m.timers[best].when || (t.when == m.timers[best].when && t.seq < m.timers[best].seq) {
			best = i
		}
	}
	return best, best >= 0
}

// An op of a generated program.
type opKind uint8

const (
	opReset opKind = iota
	opStop
	opAdvanceBy
	opAdvanceToNext
	opCheckNext
	numOps
)

type op struct {
	kind opKind
	i    int
	d    time.Duration
}

// A program: timer count, per-timer re-arm delay applied inside the callback
// (negative: no re-arm), and the ops.
type program struct {
	tick  time.Duration
	rearm []time.Duration
	ops   []op
}

func (p program) String() string {
	return fmt.Sprintf("tick=%v timers=%d ops=%d", p.tick, len(p.rearm), len(p.ops))
}

func randDuration(r *rand.Rand, tick time.Duration) time.Duration {
	switch r.IntN(10) {
	case 0:
		return -time.Duration(r.IntN(1000))
	case 1:
		return 0
	case 2, 3, 4:
		return time.Duration(r.Int64N(int64(5 * tick))) // within a few ticks, sub-tick offsets
	case 5, 6:
		return time.Duration(r.Int64N(int64(200 * tick)))
	case 7:
		return time.Duration(r.Int64N(int64(100000 * tick)))
	case 8:
		return time.Duration(r.Int64N(math.MaxInt64/2)) + time.Duration(r.Int64N(math.MaxInt64/2))
	default:
		return tick * time.Duration(r.IntN(4)) // exactly on tick boundaries
	}
}

func genProgram(r *rand.Rand) program {
	ticks := []time.Duration{time.Millisecond, time.Microsecond, 7 * time.Millisecond, 1, 250 * time.Microsecond}
	p := program{tick: ticks[r.IntN(len(ticks))]}
	n := 1 + r.IntN(40)
	p.rearm = make([]time.Duration, n)
	for i := range p.rearm {
		p.rearm[i] = -1
		if r.IntN(3) == 0 {
			p.rearm[i] = max(0, randDuration(r, p.tick))
		}
	}
	nops := 1 + r.IntN(300)
	for range nops {
		o := op{kind: opKind(r.IntN(int(numOps))), i: r.IntN(n)}
		switch o.kind {
		case opReset:
			o.d = randDuration(r, p.tick)
		case opAdvanceBy:
			o.d = randDuration(r, p.tick)
			if r.IntN(4) == 0 {
				o.d = time.Duration(r.Int64N(int64(3 * p.tick)))
			}
		}
		p.ops = append(p.ops, o)
	}
	return p
}

type fire struct {
	timer int
	at    int64
}

// runProgram runs p on a virtual wheel and on the model and returns the first
// difference, or "".
func runProgram(p program) string {
	cfg := DefaultConfig()
	cfg.Tick = p.tick
	v, err := NewVirtual(cfg)
	if err != nil {
		return err.Error()
	}
	m := &model{timers: make([]modelTimer, len(p.rearm))}
	var got, want []fire
	timers := make([]Timer, len(p.rearm))
	for i := range timers {
		if err := timers[i].Init(v.Wheel, func() {
			got = append(got, fire{i, int64(v.Now())})
			if p.rearm[i] >= 0 && len(got) < 500 {
				timers[i].Reset(p.rearm[i])
			}
		}); err != nil {
			return err.Error()
		}
	}
	// modelAdvance fires the model up to t, applying the same re-arms.
	modelAdvance := func(t int64) {
		t = max(t, m.now)
		for {
			i, ok := m.next()
			if !ok || m.timers[i].when > t {
				break
			}
			m.now = m.timers[i].when
			m.timers[i].pending = false
			want = append(want, fire{i, m.now})
			if p.rearm[i] >= 0 && len(want) < 500 {
				m.reset(i, p.rearm[i])
			}
		}
		m.now = t
	}
	for k, o := range p.ops {
		switch o.kind {
		case opReset:
			w := m.reset(o.i, o.d)
			if g := timers[o.i].Reset(o.d); g != w {
				return fmt.Sprintf("op %d: Reset(%d, %v) = %v, model %v", k, o.i, o.d, g, w)
			}
		case opStop:
			w := m.stop(o.i)
			if g := timers[o.i].Stop(); g != w {
				return fmt.Sprintf("op %d: Stop(%d) = %v, model %v", k, o.i, g, w)
			}
		case opAdvanceBy:
			target := m.deadline(o.d)
			modelAdvance(target)
			v.AdvanceBy(o.d)
		case opAdvanceToNext:
			if i, ok := m.next(); ok {
				modelAdvance(m.timers[i].when)
			}
			v.AdvanceToNext()
		case opCheckNext:
			i, ok := m.next()
			d, gok := v.NextDeadline()
			if ok != gok || (ok && int64(d) != m.timers[i].when) {
				return fmt.Sprintf("op %d: NextDeadline = %v,%v; model %v", k, d, gok, ok)
			}
		}
		if int64(v.Now()) != m.now {
			return fmt.Sprintf("op %d (%v): Now = %d, model %d", k, o.kind, v.Now(), m.now)
		}
		if !slices.Equal(got, want) {
			return fmt.Sprintf("op %d (%v): %s", k, o.kind, fireDiff(got, want))
		}
		for i := range timers {
			d, ok := timers[i].Deadline()
			if ok != m.timers[i].pending || (ok && int64(d) != m.timers[i].when) {
				return fmt.Sprintf("op %d: timer %d Deadline = %v,%v; model %+v", k, i, d, ok, m.timers[i])
			}
		}
	}
	// Drain: everything left must fire in model order (re-arms capped).
	modelAdvance(maxWhen)
	v.AdvanceTo(maxWhen)
	if !slices.Equal(got, want) {
		return "drain: " + fireDiff(got, want)
	}
	s := v.Stats()
	if s.Scheduled != s.Fired+s.Cancelled+s.Dropped+s.Pending {
		return fmt.Sprintf("stats do not add up: %+v", s)
	}
	return ""
}

// TestModel runs thousands of random operation sequences on the virtual wheel
// and on the reference model; the fired (timer, time) sequences, return
// values, deadlines and Now must agree exactly.
func TestModel(t *testing.T) {
	// -seed=N runs the one case N (the seed a failure prints); without it
	// the cases derive from a fresh base seed.
	seeds := make([]uint64, 0, *casesFlag)
	if s := testseed.Flag(); s != 0 {
		seeds = append(seeds, s)
	} else {
		b := freshSeed()
		t.Logf("%d cases derived from base seed %d; a failing case prints its own -seed", *casesFlag, b)
		base := rand.New(rand.NewPCG(b, 2))
		for range *casesFlag {
			seeds = append(seeds, base.Uint64()|1)
		}
	}
	if testing.Short() && len(seeds) > 300 {
		seeds = seeds[:300]
	}
	for _, seed := range seeds {
		p := genProgram(rand.New(rand.NewPCG(seed, seed)))
		if diff := runProgram(p); diff != "" {
			t.Fatalf("seed %d (%v): %s\nreproduce: go test ./wheel -run '^TestModel$' -seed=%d -v", seed, p, diff, seed)
		}
	}
}

// FuzzModel decodes operation sequences from fuzz input and checks them
// against the model.
func FuzzModel(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{3, 0, 200, 17, 1, 0, 2, 255, 255, 4, 9, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		ticks := []time.Duration{time.Millisecond, time.Microsecond, 3, time.Second}
		p := program{tick: ticks[int(data[0])%len(ticks)]}
		n := 1 + int(data[1])%16
		p.rearm = make([]time.Duration, n)
		for i := range p.rearm {
			p.rearm[i] = -1
		}
		data = data[2:]
		for len(data) >= 3 {
			o := op{kind: opKind(data[0] % byte(numOps)), i: int(data[0]/byte(numOps)) % n}
			raw := int64(data[1])<<8 | int64(data[2])
			// Spread 16 bits over sub-tick to years: mantissa * 4^exponent ticks/16.
			o.d = time.Duration((raw & 0xff) * int64(p.tick) / 16 << (2 * (raw >> 8 & 0x1f)))
			if o.d < 0 {
				o.d = maxWhen
			}
			if o.kind == opStop && raw&1 == 1 {
				p.rearm[o.i] = o.d % (10 * p.tick)
			}
			p.ops = append(p.ops, o)
			data = data[3:]
		}
		if diff := runProgram(p); diff != "" {
			t.Fatalf("%v: %s", p, diff)
		}
	})
}

func TestModelReproducer(t *testing.T) {
	// A fixed program with ties, sub-tick offsets and re-arms inside callbacks.
	p := program{tick: time.Millisecond, rearm: []time.Duration{0, 1500 * time.Microsecond, -1}}
	p.ops = []op{
		{kind: opReset, i: 0, d: 2 * time.Millisecond},
		{kind: opReset, i: 2, d: 2 * time.Millisecond},
		{kind: opReset, i: 1, d: 1999 * time.Microsecond},
		{kind: opAdvanceBy, d: 2 * time.Millisecond},
		{kind: opStop, i: 1},
		{kind: opAdvanceBy, d: 10 * time.Millisecond},
	}
	require.Empty(t, runProgram(p))
}

func (k opKind) String() string {
	return [...]string{"reset", "stop", "advanceBy", "advanceToNext", "checkNext"}[k]
}

// fireDiff describes the first difference of two fire sequences.
func fireDiff(got, want []fire) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-2)
	return fmt.Sprintf("fire #%d differs (lengths %d vs %d)\n  wheel %v\n  model %v",
		i, len(got), len(want), got[lo:min(len(got), i+3)], want[lo:min(len(want), i+3)])
}

// freshSeed picks a base seed for a run of many cases (the testseed rule:
// no -seed means a fresh one, which the test logs).
func freshSeed() uint64 { return rand.Uint64() | 1 }
