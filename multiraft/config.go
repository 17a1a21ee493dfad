package multiraft

import (
	"errors"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hashicorp/go-metrics"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/internal/cfgerr"
)

// ErrInvalidConfig is wrapped by every error Config.Validate, NewHost and
// AddGroup report about their input.
var ErrInvalidConfig = errors.New("multiraft: invalid config")

// Errors of a Host's methods.
var (
	// ErrStopped is returned by the methods of a stopped Host.
	ErrStopped = errors.New("multiraft: host stopped")
	// ErrUnknownGroup is returned for a group the Host does not run.
	ErrUnknownGroup = errors.New("multiraft: unknown group")
	// ErrGroupExists is returned by AddGroup for a group already added.
	ErrGroupExists = errors.New("multiraft: group already added")
)

// A FieldError reports one invalid field of a configuration: the field,
// the value it had and why it is refused, in words that name no Go
// identifier, so that a command line can print it under its own flag name.
// It is the type every raftick package reports configuration errors with
// (see election.FieldError); multiraft's wrap ErrInvalidConfig.
type FieldError = cfgerr.FieldError

func fieldErr(field string, value any, format string, args ...any) error {
	return cfgerr.New(ErrInvalidConfig, field, value, format, args...)
}

// Config configures a Host. Start from DefaultConfig and set ID.
type Config struct {
	// ID is this host's node ID; non-zero. It is also the election ID of
	// this host's replica in every group: a group's voters are node IDs.
	ID election.ID

	// Election is the template of every group's election.Config. The Host
	// sets ID, Voters, Rand and Observer of each group's copy (Observer
	// must be nil: see Config.Observer; a Rand is used as Config.Rand when
	// that is nil); every other field applies to all groups as given. A
	// hibernating group runs no timer, its snapshot timer included.
	Election election.Config

	// HibernateAfter is how long a group's leader must see no activity
	// (Touch, a new term, a wake) before it hibernates the group; >= 0,
	// 0 means never. It is checked every heartbeat interval. On a
	// real-time wheel a Touch is timed by the host's clock stamp (see
	// Host.Touch), up to a heartbeat interval early, so a group may sleep
	// up to that much sooner after its last Touch; never before the sweep
	// after one.
	HibernateAfter time.Duration

	// Coalesce sends the heartbeats of all groups, and their answers,
	// as one Batch per peer node per heartbeat tick (and per batch
	// answered) instead of one message each. Votes and every other
	// message are sent at once either way.
	// It also drives the heartbeats of the groups this host leads: their
	// nodes run with election.Config.ExternalHeartbeat (unless the
	// template sets Emulate.HeartbeatPerPeer), and one host tick, every nine
	// tenths of HeartbeatInterval, makes all of them heartbeat at once
	// (see the package documentation).
	Coalesce bool
	// CoalesceWindow is the longest a heartbeat or an answer waits to be
	// coalesced when no heartbeat tick or Step sends it sooner (a leader
	// just elected or woken); in [0,
	// HeartbeatInterval/2], 0 means HeartbeatInterval/2 (CockroachDB
	// flushes twice per tick).
	CoalesceWindow time.Duration

	// LivenessInterval is how often the host tells each peer node it is
	// alive when it sent nothing else meanwhile; >= 0, 0 means the
	// heartbeat interval.
	LivenessInterval time.Duration
	// LivenessTimeout is how long a peer node may stay silent before the
	// host takes it for dead and fails over the hibernating groups it
	// led (see FailoverInFlight); 0 means the election timeout, or the
	// shortest value the rules below allow if that is longer. It must
	// exceed LivenessInterval, and be at least the leader lease
	// (ElectionTimeout*LeaseRatio) plus the coalescing window: a replica
	// woken by liveness to elect another leader must not give up one that
	// still counts it in its lease. At an election timeout or more, a
	// replica woken so has kept its promise to the dead leader (see
	// election.Node.QuorumContact) and votes at once.
	LivenessTimeout time.Duration

	// FailoverInFlight is how many hibernating groups the host wakes at a
	// time for failover when node liveness takes their leader's host for
	// dead: woken groups that do not know a leader yet (see the package
	// documentation, # Node liveness). >= 0; 0 means
	// DefaultFailoverInFlight (1024).
	FailoverInFlight int

	// Rand seeds every group's timers (through election.Config.Rand, one
	// draw per Node created). nil means a source seeded from the
	// operating system; set it for reproducible runs on a virtual wheel.
	Rand *rand.Rand

	// GroupLabels labels every metric of a group's node with the group's
	// ID (group=<ID>, after the template's MetricsLabels), besides the
	// node's (node=<the host's ID>), which every metric of the host and
	// its nodes carries. Off by default: it makes one series per group per
	// metric (see the package's metrics). The template's MetricsLabels
	// must then not name "group".
	GroupLabels bool

	// Observer, if set, receives every event of every group's node with
	// the group's ID, in order, with no lock of the host or a node held:
	// on the goroutine that caused the event (a wheel callback, a Host
	// method) once it let go of the host's lock, or on another goroutine
	// that held the lock meanwhile. It may call the Host; it should not
	// block, as the host's other call-outs wait behind it.
	Observer func(GroupID, election.Event)

	// Store persists every group's term and vote (those added without a
	// GroupConfig.Storage): the host writes the states that changed
	// while it stepped a batch or ran a timer in one Store.Save, on a
	// goroutine of its own (group commit), and the messages that depend
	// on them leave once they are durable. nil means a MemoryStore; use
	// multiraft/pebblestore, or a Store over the server's own engine, to
	// survive a process restart.
	Store Store
}

// DefaultConfig returns a Config with election.DefaultConfig as the
// template (ElectionTimeout 1s, heartbeats every 100ms, PreVote and
// CheckQuorum on), hibernation after one idle second, coalescing on, and
// liveness messages every heartbeat interval with a timeout of one
// election timeout. ID must still be set.
func DefaultConfig() Config {
	return Config{
		Election:       election.DefaultConfig(),
		HibernateAfter: time.Second,
		Coalesce:       true,
	}
}

// Validate reports the first invalid field of c, or nil.
func (c Config) Validate() error {
	_, _, err := c.normalized()
	return err
}

// normalized returns c with defaults applied and the election template's
// effective config (with ID and a one-voter group, for validation).
func (c Config) normalized() (Config, election.Config, error) {
	if c.ID == election.None {
		return c, election.Config{}, fieldErr("ID", c.ID, "must not be 0")
	}
	if c.Election.Observer != nil {
		return c, election.Config{}, fieldErr("Election", "Observer", "is set by the host for every group; use the host's own Observer")
	}
	if c.Rand == nil {
		c.Rand = c.Election.Rand
	}
	tmpl := c.Election
	tmpl.ID, tmpl.Voters = c.ID, []election.ID{c.ID}
	eff, err := tmpl.Effective()
	if err != nil {
		var fe *election.FieldError
		if errors.As(err, &fe) {
			return c, eff, &FieldError{Field: "Election." + fe.Field, Value: fe.Value, Reason: fe.Reason, Err: ErrInvalidConfig, Cause: err}
		}
		return c, eff, &FieldError{Field: "Election", Value: "template", Reason: err.Error(), Err: ErrInvalidConfig, Cause: err}
	}
	if c.GroupLabels && slices.ContainsFunc(c.Election.MetricsLabels, func(l metrics.Label) bool { return l.Name == "group" }) {
		return c, eff, fieldErr("GroupLabels", c.GroupLabels, "cannot be set with a template metrics label named group")
	}
	if c.HibernateAfter < 0 {
		return c, eff, fieldErr("HibernateAfter", c.HibernateAfter, "must not be negative")
	}
	if err := c.checkFloors(); err != nil {
		return c, eff, err
	}
	hb := eff.HeartbeatInterval
	if c.CoalesceWindow < 0 || c.CoalesceWindow > hb/2 {
		return c, eff, fieldErr("CoalesceWindow", c.CoalesceWindow, "must be in [0, %v] (half the heartbeat interval)", hb/2)
	}
	if c.CoalesceWindow == 0 {
		c.CoalesceWindow = max(hb/2, 1)
	}
	if c.LivenessInterval < 0 {
		return c, eff, fieldErr("LivenessInterval", c.LivenessInterval, "must not be negative")
	}
	if c.LivenessInterval == 0 {
		c.LivenessInterval = hb
	}
	if c.LivenessTimeout < 0 {
		return c, eff, fieldErr("LivenessTimeout", c.LivenessTimeout, "must not be negative")
	}
	lease := time.Duration(float64(eff.ElectionTimeout) * eff.LeaseRatio)
	if c.LivenessTimeout == 0 {
		// The election timeout, unless the checks below ask for more.
		c.LivenessTimeout = max(eff.ElectionTimeout, lease+c.CoalesceWindow, c.LivenessInterval+1)
	}
	if c.LivenessTimeout <= c.LivenessInterval {
		return c, eff, fieldErr("LivenessTimeout", c.LivenessTimeout, "must exceed the liveness interval (%v)", c.LivenessInterval)
	}
	if c.FailoverInFlight < 0 {
		return c, eff, fieldErr("FailoverInFlight", c.FailoverInFlight, "must not be negative")
	}
	if c.FailoverInFlight == 0 {
		c.FailoverInFlight = DefaultFailoverInFlight
	}
	if c.Coalesce && c.LivenessTimeout < lease+c.CoalesceWindow || c.LivenessTimeout < lease {
		return c, eff, fieldErr("LivenessTimeout", c.LivenessTimeout, "must be at least the leader lease (%v) plus the coalescing window", lease)
	}
	return c, eff, nil
}

// fitTick checks c's periods (with defaults applied; eff its effective
// election template, set the CoalesceWindow the user set or 0) against
// tick, the wheel's: a host timer of a period below the tick would come
// due again as soon as it fired, and at nanosecond periods a wheel does
// nothing else. A defaulted CoalesceWindow is raised to the tick.
func (c *Config) fitTick(eff election.Config, set, tick time.Duration) error {
	for _, f := range []struct {
		name string
		d    time.Duration
	}{
		{"Election.ElectionTimeout", eff.ElectionTimeout},
		{"Election.HeartbeatInterval", eff.HeartbeatInterval},
		{"LivenessInterval", c.LivenessInterval},
	} {
		if f.d < tick {
			return fieldErr(f.name, f.d, "must be at least the wheel's tick (%v)", tick)
		}
	}
	if c.Coalesce && c.CoalesceWindow < tick {
		if set != 0 {
			return fieldErr("CoalesceWindow", set, "must be at least the wheel's tick (%v)", tick)
		}
		c.CoalesceWindow = tick
	}
	return nil
}
