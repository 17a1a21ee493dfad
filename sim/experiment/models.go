package experiment

import (
	"strings"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/sim"
)

// A Model is a named preset of Setup together with the timing rules of
// the implementation it stands for.
type Model struct {
	// Name is the preset's name: "paper", "plain", "hashicorp" or "etcd".
	Name string
	// Doc says in one line what the preset models.
	Doc   string
	setup func() Setup
	// harness: hashicorp/raft's timing: timeouts in [T, 2T), heartbeat
	// T/10, the crash of raftadapter's harness.
	harness bool
	// etcd: etcd raft's timing: [T, 2T) in ticks of the heartbeat (EtcdModel).
	etcd bool
	// coldStart: the preset's runs are cold starts (Bootstrap), whose
	// short logs apply (OcamlRaftModel).
	coldStart bool
}

// ColdStart reports whether the preset describes cold starts (raftsim
// bootstrap) rather than failovers: its ShortLogs apply to Bootstrap.
func (m Model) ColdStart() bool { return m.coldStart }

// Models returns the presets: paper (the default), plain, hashicorp,
// etcd and ocaml-raft.
func Models() []Model {
	return []Model{
		{Name: "paper", Doc: "the Raft paper's LogCabin cluster (default): blocking disk writes, candidates wait for their timeout, whole-ms timeouts, timer noise", setup: PaperModel},
		{Name: "plain", Doc: "the election package as it is: responses wait for the disk, the node keeps working, continuous timeouts, no noise", setup: PlainModel},
		{Name: "hashicorp", Doc: "hashicorp/raft's timing: free-running follower timer checked against last contact, [T, 2T) timeouts, " +
			"pre-vote, votes refused while a leader is known, per-follower heartbeats every [T/10, T/5), no disk", setup: HashicorpModel, harness: true},
		{Name: "etcd", Doc: "etcd raft's timing: ticks of T/10 with a phase per node, [T, 2T) in whole ticks, timer restarted on any higher term, " +
			"pre-vote, CheckQuorum's lease, heartbeat every tick, no disk", setup: EtcdModel, etcd: true},
		{Name: "ocaml-raft", Doc: "Howard et al.'s ocaml-raft simulator (bootstrap only): five servers from one instant, four can win, " +
			"latency normal:5ms,3ms redrawn, no disk, deposed candidates refuse the request, clock from a uniform point of the " +
			"first heartbeat interval to the first leader", setup: OcamlRaftModel, coldStart: true},
	}
}

// ModelNames returns the presets' names for messages: "paper, plain or
// hashicorp".
func ModelNames() string {
	var names []string
	for _, m := range Models() {
		names = append(names, m.Name)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ModelNamed returns the preset called name, or a *sim.FieldError
// (Field "Model") wrapping ErrInvalidConfig.
func ModelNamed(name string) (Model, error) {
	for _, m := range Models() {
		if m.Name == name {
			return m, nil
		}
	}
	return Model{}, fieldErr("Model", name, "unknown model (want %s)", ModelNames())
}

// Setup returns the preset's cluster.
func (m Model) Setup() Setup { return m.setup() }

// Timing sets the election timeout range [lo, hi] and the heartbeat
// interval of s under m's rules. heartbeat 0 means the model's default:
// half of lo (paper, plain), or lo/10 for hashicorp. hashicorp/raft
// draws its timeouts from [T, 2T): for the hashicorp model, lo == hi
// means T (the range becomes [T, 2T)), a range other than [T, 2T) is
// refused, and the crash follows raftadapter's harness, T after the
// leader settled. Errors are *sim.FieldError values (Field "TimeoutMax")
// wrapping ErrInvalidConfig.
func (m Model) Timing(s *Setup, lo, hi, heartbeat time.Duration) error {
	if m.harness || m.etcd {
		var err error
		if hi, heartbeat, err = doubleRange(m.Name, lo, hi, heartbeat); err != nil {
			return err
		}
		if m.etcd {
			s.Tick = heartbeat // etcd's heartbeat is one tick
		} else {
			s.Settle = lo
		}
	}
	s.TimeoutMin, s.TimeoutMax, s.Heartbeat = lo, hi, heartbeat
	return nil
}

// Tune applies m's rules to a search: for the hashicorp model every
// candidate is [T, 2T) (Spreads defaults to [1], and other spreads are
// refused with a *sim.FieldError, Field "Spreads"), the heartbeat is a
// tenth of each T unless c.Base.Heartbeat is set, and the crash comes T
// after the leader settled. The other models keep c as it is.
func (m Model) Tune(c *TuneConfig) error {
	if m.coldStart {
		return fieldErr("Model", m.Name, "tune measures failovers; the %s model describes cold starts (run it with bootstrap)", m.Name)
	}
	if m.etcd {
		return fieldErr("Model", m.Name, "tune does not support the etcd model (its tick, and so its heartbeat, would have to follow every candidate timeout)")
	}
	if !m.harness {
		return nil
	}
	if len(c.Spreads) == 0 {
		c.Spreads = []float64{1}
	}
	for _, f := range c.Spreads {
		if f != 1 {
			return fieldErr("Spreads", f, "the hashicorp model draws timeouts from [T, 2T): spread must be 1")
		}
	}
	if c.Base.Heartbeat == 0 {
		c.HeartbeatRatio = 0.1
	}
	c.SettleRatio = 1
	return nil
}

// WithNodes returns s with n servers, and as many short logs as fit (the
// paper's 2 of 4 survivors, none when fewer than 4 servers).
func (s Setup) WithNodes(n int) Setup {
	s.Nodes = n
	if s.ShortLogs > s.Nodes-2 {
		s.ShortLogs = max(0, s.Nodes-3)
	}
	return s
}

// PlainModel returns the election package as it is on the paper model's
// network: a vote waits for the disk but the server keeps working
// (GroupCommit, no blocking), a new leader does not write before its
// first heartbeat, candidates step down on a majority of rejections,
// timeouts are continuous and exact.
func PlainModel() Setup {
	s := PaperModel()
	s.DiskBlocks, s.LeaderWrite, s.CandidatesWait, s.KeepTimer = false, false, false, false
	s.Granularity, s.TimerLateness = 0, nil
	s.LeaderWrites, s.TimersWait, s.RearmAfterTermWrite = 0, false, false
	s.GroupCommit = true
	return s
}

// PaperModel returns the network and disk model that stands in for the paper's
// test cluster (LogCabin on five servers, gigabit Ethernet, SSDs, a
// broadcast time of about 15ms). The mechanisms follow LogCabin's 2013
// code: blocking metadata writes (one per candidate, two per voter, two
// for a new leader's first entry), timers that wait for a write to end,
// a granted vote at a new term re-arming after the term write, candidates
// that wait and keep their deadline, whole-millisecond timeouts. Two
// numbers are fitted to the paper's figure: the disk mean (the 150-155ms
// median) and the timer lateness (the 150-150ms row). See sim/README.md
// for the evidence behind each value.
func PaperModel() Setup {
	return Setup{
		Nodes:      5,
		TimeoutMin: 150 * time.Millisecond,
		TimeoutMax: 300 * time.Millisecond,
		Network: sim.Network{
			Latency:             sim.Normal(250*time.Microsecond, 50*time.Microsecond),
			Disk:                sim.Normal(2600*time.Microsecond, 500*time.Microsecond),
			DiskBlocks:          true,
			LeaderWrite:         true,
			LeaderWrites:        2,
			TimersWait:          true,
			RearmAfterTermWrite: true,
		},
		CandidatesWait: true,
		KeepTimer:      true,
		Granularity:    time.Millisecond,
		TimerLateness:  sim.Uniform(0, 200*time.Microsecond),
		ShortLogs:      2,
	}
}

// HashicorpModel returns a setup with hashicorp/raft v1.8.0's election
// timing, to compare with real hashicorp/raft clusters (raftadapter), for
// T = HeartbeatTimeout = ElectionTimeout:
//
//   - followers run a free-running timer re-armed with a fresh [T, 2T) on
//     every fire and campaign only if the leader was silent for T
//     (election.CheckLastContact);
//   - a (pre-)candidate's round lasts [T, 2T), rejections are ignored
//     (CandidatesWait), pre-vote is on;
//   - a node refuses votes and pre-votes as long as it knows a leader, and
//     forgets it only when its own timer finds it silent or it changes
//     state (LeaderStickiness with election.StickyUntilTimeout);
//   - the leader heartbeats each follower on its own timer every [T/10,
//     T/5) (HeartbeatPerPeer, HeartbeatJitter), and at once on winning;
//   - the in-memory stores have no disk delay, and the latency is left
//     unset (in-process transport);
//   - the failover crash follows raftadapter's harness (Settle T).
//
// T defaults to 150ms; Model.Timing keeps the rules for another T.
func HashicorpModel() Setup {
	return Setup{
		Nodes:            5,
		TimeoutMin:       150 * time.Millisecond,
		TimeoutMax:       300 * time.Millisecond,
		Heartbeat:        150 * time.Millisecond / 10,
		HeartbeatJitter:  true,
		HeartbeatPerPeer: true,
		PreVote:          true,
		CandidatesWait:   true,
		LeaderStickiness: true,
		Stickiness:       election.StickyUntilTimeout,
		Detection:        election.CheckLastContact,
		Settle:           150 * time.Millisecond,
	}
}
