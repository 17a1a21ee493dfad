package experiment

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/sim"
)

// A Knob is one setting of a Setup, declared once: the name Setup.Set and
// sweeps take, the raftsim flag, the Setup fields it sets (whose
// snake_case names, with _ms for durations, are the keys of Params and of
// the JSON records), the form of its value, the flag's default and help,
// and the engines that honour it. Setup.Set, SetupParams, raftsim's flags,
// their help, the map from a refused field to its flag and the refusal of
// a model-only knob with a real engine are all derived from Knobs.
//
// Adding a knob is one entry here, the model code that reads the field,
// and a test.
type Knob struct {
	// Name is the setting's name for Setup.Set and sweeps: "sendgap".
	Name string
	// Old lists names Set still accepts for it (and raftsim's hidden
	// flags): "noise" for "lateness".
	Old []string
	// Flag is raftsim's flag ("send-gap"), "" if the knob has none.
	Flag string
	// Fields are the Setup fields the knob sets, by Go name.
	Fields []string
	// Kind is the form of the value: the flag's type.
	Kind KnobKind
	// Default is the flag's default in its command-line form ("" for the
	// kind's zero).
	Default string
	// Help is the flag's help (a back-quoted word names the value, as in
	// package flag).
	Help string
	// Example is a value that turns the knob on, for help and tests.
	Example string
	// Engines lists the engines that honour the knob when it is on (set
	// to something other than its zero), nil meaning every engine: a
	// mechanism of the simulated servers lists the engines that run them.
	Engines []string

	set func(s *Setup, value string) error
}

// A KnobKind is the form of a knob's value.
type KnobKind int

// The kinds of knob values.
const (
	KindString   KnobKind = iota // a word or a range
	KindLatency                  // a latency spec (sim.ParseLatency), or none
	KindInt                      // an integer
	KindFloat                    // a real number
	KindBool                     // true or false
	KindDuration                 // a Go duration: 2s, 300us
)

// The engines' names (raftsim's --engine).
const (
	EngineRaftick   = "raftick"          // the election package on virtual time
	EngineRealtime  = "raftick-realtime" // the election package on a real-time wheel
	EngineEtcd      = "etcd"             // real etcd raft on virtual time
	EngineHashicorp = "hashicorp"        // real hashicorp/raft on real time
)

// simulated are the engines that run the election package's servers,
// which model every mechanism of a Setup.
var simulated = []string{EngineRaftick, EngineRealtime}

// Honours reports whether engine models the knob when it is on.
func (k Knob) Honours(engine string) bool {
	return k.Engines == nil || slices.Contains(k.Engines, engine)
}

// On reports whether value (valid for k) sets k to something other than
// off (its zero): a knob an engine does not honour is refused only then.
func (k Knob) On(value string) bool {
	var s Setup
	if k.set(&s, value) != nil {
		return true
	}
	return !reflect.ValueOf(s).IsZero()
}

// Set sets k in s from its command-line form. Errors are *sim.FieldError
// values whose Field is k.Name, wrapping ErrInvalidConfig.
func (k Knob) Set(s *Setup, value string) error { return k.set(s, value) }

// Keys returns the Params (JSON) keys of k's fields: "send_gap",
// "cancel_backoff_ms".
func (k Knob) Keys() []string {
	keys := make([]string, len(k.Fields))
	for i, name := range k.Fields {
		keys[i] = snake(name)
		if f, ok := reflect.TypeFor[Setup]().FieldByName(name); ok && f.Type == durationType {
			keys[i] += "_ms"
		}
	}
	return keys
}

// KnobNamed returns the knob Set calls name (or an old name of), and
// whether there is one.
func KnobNamed(name string) (Knob, bool) {
	for _, k := range Knobs {
		if k.Name == name || slices.Contains(k.Old, name) {
			return k, true
		}
	}
	return Knob{}, false
}

// KnobOfFlag returns the knob of raftsim's flag (or an old flag name),
// and whether there is one.
func KnobOfFlag(flag string) (Knob, bool) {
	for _, k := range Knobs {
		if k.Flag != "" && (k.Flag == flag || slices.Contains(k.Old, flag)) {
			return k, true
		}
	}
	return Knob{}, false
}

// knob setters: each parses a value, refuses it with a field error naming
// the knob, and sets the field(s) of s.

func bad(name, value, format string, args ...any) error {
	return fieldErr(name, value, format, args...)
}

func intKnob(lo, hi int, msg string, field func(*Setup) *int) func(string) func(*Setup, string) error {
	return func(name string) func(*Setup, string) error {
		return func(s *Setup, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return bad(name, v, "not an integer")
			}
			if n < lo || n > hi {
				return bad(name, v, "%s", msg)
			}
			*field(s) = n
			return nil
		}
	}
}

func boolKnob(field func(*Setup) *bool) func(string) func(*Setup, string) error {
	return func(name string) func(*Setup, string) error {
		return func(s *Setup, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return bad(name, v, "must be true or false")
			}
			*field(s) = b
			return nil
		}
	}
}

func floatKnob(lo, hi float64, msg string, field func(*Setup) *float64) func(string) func(*Setup, string) error {
	return func(name string) func(*Setup, string) error {
		return func(s *Setup, v string) error {
			r, err := strconv.ParseFloat(v, 64)
			if err != nil || r != r || r < lo || r > hi {
				return bad(name, v, "%s", msg)
			}
			*field(s) = r
			return nil
		}
	}
}

func durationKnob(msg string, field func(*Setup) *time.Duration) func(string) func(*Setup, string) error {
	return func(name string) func(*Setup, string) error {
		return func(s *Setup, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil {
				return bad(name, v, "%s", msg)
			}
			if d < 0 {
				return bad(name, v, "must not be negative")
			}
			*field(s) = d
			return nil
		}
	}
}

func latencyKnob(field func(*Setup) *sim.Latency) func(string) func(*Setup, string) error {
	return func(name string) func(*Setup, string) error {
		return func(s *Setup, v string) error {
			l, err := OptionalLatency(v)
			if err != nil {
				return reason(name, v, err)
			}
			*field(s) = l
			return nil
		}
	}
}

func wordKnob(want string, words map[string]func(*Setup)) func(string) func(*Setup, string) error {
	return func(name string) func(*Setup, string) error {
		return func(s *Setup, v string) error {
			f, ok := words[v]
			if !ok {
				return bad(name, v, "must be %s", want)
			}
			f(s)
			return nil
		}
	}
}

// knob declares one entry of Knobs; setter is given the knob's name.
func knob(k Knob, setter func(name string) func(*Setup, string) error) Knob {
	k.set = setter(k.Name)
	return k
}

const latencyForms = "fixed:5ms, uniform:LO,HI, normal:MEAN,SD, lognormal:MEDIAN,SIGMA, empirical:D1,D2,..."

// Knobs are the settings of a Setup, in the order raftsim applies its
// flags (a later knob may depend on an earlier one: shortlogs after nodes).
var Knobs = []Knob{
	knob(Knob{Name: "nodes", Example: "3", Flag: "nodes", Fields: []string{"Nodes"}, Kind: KindInt, Default: "5",
		Help: "number of servers"},
		func(name string) func(*Setup, string) error {
			return func(s *Setup, v string) error {
				n, err := strconv.Atoi(v)
				if err != nil {
					return bad(name, v, "not an integer")
				}
				if n < 1 || n > sim.MaxNodes {
					return bad(name, v, "must be in [1, %d]", sim.MaxNodes)
				}
				*s = s.WithNodes(n) // as many short logs as fit
				return nil
			}
		}),
	knob(Knob{Name: "timeout", Example: "150-155ms", Flag: "timeout", Fields: []string{"TimeoutMin", "TimeoutMax"}, Kind: KindString, Default: "150ms-300ms",
		Help: "election timeout range `min-max` (e.g. 150ms-300ms, 150-155ms, or one value for no randomness)"},
		func(name string) func(*Setup, string) error {
			return func(s *Setup, v string) error {
				lo, hi, err := ParseRange(v)
				if err != nil {
					return reason(name, v, err)
				}
				s.TimeoutMin, s.TimeoutMax = lo, hi
				return nil
			}
		}),
	knob(Knob{Name: "heartbeat", Example: "50ms", Flag: "heartbeat", Fields: []string{"Heartbeat"}, Kind: KindDuration,
		Help: "leader heartbeat interval (0: half the minimum timeout, as in the paper)"},
		durationKnob("not a duration (e.g. 75ms)", func(s *Setup) *time.Duration { return &s.Heartbeat })),
	knob(Knob{Name: "latency", Example: "fixed:1ms", Flag: "latency", Fields: []string{"Latency"}, Kind: KindLatency,
		Help: "one-way message latency `spec`: " + latencyForms + " (see below; default: the model's)"},
		latencyKnob(func(s *Setup) *sim.Latency { return &s.Latency })),
	knob(Knob{Name: "disk", Example: "fixed:2ms", Flag: "disk", Fields: []string{"Disk"}, Kind: KindLatency,
		Help: "disk write time `spec` (same forms as --latency, or none) paid before a vote is answered (default: the model's)"},
		latencyKnob(func(s *Setup) *sim.Latency { return &s.Disk })),
	knob(Knob{Name: "lateness", Example: "uniform:0,1ms", Old: []string{"noise"}, Flag: "lateness", Fields: []string{"TimerLateness"}, Kind: KindLatency,
		Help: "timer lateness `spec`: how late a server acts on a due timer, added to every election and candidate timeout (same forms, or none; default: the model's)"},
		latencyKnob(func(s *Setup) *sim.Latency { return &s.TimerLateness })),
	knob(Knob{Name: "sendgap", Example: "fixed:300us", Flag: "send-gap", Fields: []string{"SendGap"}, Kind: KindLatency, Engines: simulated,
		Help: "serialize each server's requests: one leaves a `spec` draw after the previous one (same forms, or none), as LogCabin's per-peer threads issue RPCs under the server's lock (default: the model's, none in every preset)"},
		latencyKnob(func(s *Setup) *sim.Latency { return &s.SendGap })),
	knob(Knob{Name: "cancelbackoff", Example: "2s", Flag: "cancel-backoff", Fields: []string{"CancelBackoff"}, Kind: KindDuration, Engines: simulated,
		Help: "model LogCabin's cancelled RPCs: a server whose role or term changes cancels its unanswered requests and sends those peers nothing until this long after each left (LogCabin: 2s until 2014-03-19, then half the election timeout; 0: off, every preset)"},
		durationKnob("want a duration of at least 0, e.g. 2s", func(s *Setup) *time.Duration { return &s.CancelBackoff })),
	knob(Knob{Name: "leaderwrites", Example: "2", Flag: "leader-writes", Fields: []string{"LeaderWrite", "LeaderWrites"}, Kind: KindInt, Engines: simulated,
		Help: "disk writes a new leader makes before its first heartbeat: 2 is LogCabin's code up to 2014-02-05 (SimpleFileLog::append fsyncs the entry's file and the metadata under the lock), 0 its code from d021532 on (the fsyncs overlap replication) (default: the model's)"},
		func(name string) func(*Setup, string) error {
			return func(s *Setup, v string) error {
				n, err := strconv.Atoi(v)
				if err != nil {
					return bad(name, v, "not an integer")
				}
				if n < 0 || n > 100 {
					return bad(name, v, "must be in [0, 100]")
				}
				s.LeaderWrite, s.LeaderWrites = n > 0, n
				return nil
			}
		}),
	knob(Knob{Name: "loss", Example: "0.01", Flag: "loss", Fields: []string{"Loss"}, Kind: KindFloat,
		Help: "probability that a message is lost, in [0, 1)"},
		func(name string) func(*Setup, string) error {
			return func(s *Setup, v string) error {
				p, err := strconv.ParseFloat(v, 64)
				if err != nil || p < 0 || p > 1 || p != p {
					return bad(name, v, "must be a probability in [0, 1]")
				}
				if p >= 1 {
					return bad(name, v, "must be below 1 (every message lost)")
				}
				s.Loss = p
				return nil
			}
		}),
	knob(Knob{Name: "dup", Example: "0.01", Flag: "dup", Fields: []string{"Duplicate"}, Kind: KindFloat,
		Help: "probability that a message is delivered twice, in [0, 1]"},
		floatKnob(0, 1, "must be a probability in [0, 1]", func(s *Setup) *float64 { return &s.Duplicate })),
	knob(Knob{Name: "prevote", Example: "true", Flag: "prevote", Fields: []string{"PreVote"}, Kind: KindBool,
		Help: "enable pre-vote"},
		boolKnob(func(s *Setup) *bool { return &s.PreVote })),
	knob(Knob{Name: "checkquorum", Example: "true", Flag: "checkquorum", Fields: []string{"CheckQuorum"}, Kind: KindBool,
		Help: "enable check-quorum (leaders step down without a quorum)"},
		boolKnob(func(s *Setup) *bool { return &s.CheckQuorum })),
	knob(Knob{Name: "candidatetimeout", Example: "75-150ms", Flag: "candidate-timeout", Fields: []string{"CandidateMin", "CandidateMax"}, Kind: KindString,
		Help: "a candidate's round timeout `range`, drawn uniformly in it, separate from the follower's election timeout (e.g. 75-150ms; default: the election timeout range)"},
		func(name string) func(*Setup, string) error {
			return func(s *Setup, v string) error {
				if v == "0" || v == "none" {
					s.CandidateMin, s.CandidateMax = 0, 0
					return nil
				}
				lo, hi, err := ParseRange(v)
				if err != nil {
					return reason(name, v, err)
				}
				s.CandidateMin, s.CandidateMax = lo, hi
				return nil
			}
		}),
	knob(Knob{Name: "candidatebackoff", Example: "true", Flag: "candidate-backoff", Fields: []string{"CandidateBackoff"}, Kind: KindBool,
		Help: "binary exponential backoff: double the candidate timeout after each failed round, until a leader is known"},
		boolKnob(func(s *Setup) *bool { return &s.CandidateBackoff })),
	knob(Knob{Name: "candidateswait", Example: "true", Flag: "candidate-waits", Fields: []string{"CandidatesWait"}, Kind: KindBool,
		Help: "a candidate waits for its round timeout even after a majority rejected it (the Raft paper's), instead of stepping down at once (etcd's) (default: the model's)"},
		boolKnob(func(s *Setup) *bool { return &s.CandidatesWait })),
	knob(Knob{Name: "crash", Example: "2", Flag: "crash", Fields: []string{"Crash"}, Kind: KindInt, Default: "1",
		Help: "number of servers that crash at once: the leader and K-1 others chosen at random; a majority must survive"},
		intKnob(1, int(^uint(0)>>1), "must be at least 1 (the leader)", func(s *Setup) *int { return &s.Crash })),
	knob(Knob{Name: "crashoffset", Example: "0", Flag: "crash-offset", Fields: []string{"CrashAfterHeartbeat"}, Kind: KindString, Default: "uniform",
		Help: "when the leader crashes: uniform (at a uniform point of the heartbeat interval, the paper's) or 0 (right after a heartbeat, AvailSim's)"},
		wordKnob("uniform or 0", map[string]func(*Setup){
			"uniform": func(s *Setup) { s.CrashAfterHeartbeat = false },
			"0":       func(s *Setup) { s.CrashAfterHeartbeat = true },
		})),
	knob(Knob{Name: "until", Example: "majority", Flag: "until", Fields: []string{"Until"}, Kind: KindString,
		Help: "stop the clock when a leader is elected, when a majority knows it, or when every running server accepted it: elected, majority or all"},
		func(name string) func(*Setup, string) error {
			return func(s *Setup, v string) error {
				u, err := ParseUntil(v)
				if err != nil {
					return reason(name, v, err)
				}
				s.Until = u
				return nil
			}
		}),
	knob(Knob{Name: "shortlogs", Example: "1", Flag: "short-logs", Fields: []string{"ShortLogs"}, Kind: KindInt,
		Help: "number of servers whose logs are one entry short, so they cannot win: survivors of the crash (failover) or servers chosen at random (bootstrap)"},
		intKnob(0, int(^uint(0)>>1), "must not be negative", func(s *Setup) *int { return &s.ShortLogs })),
	knob(Knob{Name: "clockrate", Example: "0.001", Flag: "clock-rate", Fields: []string{"ClockRate"}, Kind: KindFloat, Engines: simulated,
		Help: "give each server a timer rate drawn per trial from [1-X, 1+X] that scales all its election and candidate timeouts (e.g. 0.001; 0: the same rate everywhere)"},
		floatKnob(0, 0.5, "must be a rate deviation in [0, 0.5] (e.g. 0.001)", func(s *Setup) *float64 { return &s.ClockRate })),
	knob(Knob{Name: "latenessspread", Example: "0.5", Flag: "lateness-spread", Fields: []string{"LatenessSpread"}, Kind: KindFloat, Engines: []string{EngineRaftick},
		Help: "scale the timer lateness of each trial by a factor drawn from [1-X, 1+X], X in [0, 1] (0: the same lateness in every trial)"},
		floatKnob(0, 1, "must be a spread in [0, 1] (e.g. 0.5)", func(s *Setup) *float64 { return &s.LatenessSpread })),
	knob(Knob{Name: "latenessperserver", Example: "true", Flag: "lateness-per-server", Fields: []string{"LatenessPerServer"}, Kind: KindBool, Engines: []string{EngineRaftick},
		Help: "with --lateness-spread, draw the factor for each server instead of once per trial"},
		boolKnob(func(s *Setup) *bool { return &s.LatenessPerServer })),
	knob(Knob{Name: "timersatcrash", Example: "true", Flag: "timers-at-crash", Fields: []string{"TimersAtCrash"}, Kind: KindBool, Engines: simulated,
		Help: "start every survivor's election timer at the crash and drop the leader's heartbeats in flight (the thesis' AvailSim), instead of running them from the last heartbeat each received (the paper's cluster)"},
		boolKnob(func(s *Setup) *bool { return &s.TimersAtCrash })),
	knob(Knob{Name: "maxtime", Example: "10s", Flag: "max-time", Fields: []string{"MaxTime"}, Kind: KindDuration, Default: "1m0s",
		Help: "per-trial limit in virtual time; a trial that reaches it counts at the limit"},
		func(name string) func(*Setup, string) error {
			return func(s *Setup, v string) error {
				d, err := time.ParseDuration(v)
				if err != nil || d <= 0 {
					return bad(name, v, "must be a positive duration")
				}
				s.MaxTime = d
				return nil
			}
		}),
	// Knobs without a raftsim flag (the --model presets set them; sweeps
	// and Set reach them by name).
	knob(Knob{Name: "granularity", Example: "1ms", Fields: []string{"Granularity"}, Kind: KindDuration},
		durationKnob("not a duration (e.g. 75ms)", func(s *Setup) *time.Duration { return &s.Granularity })),
	knob(Knob{Name: "settle", Example: "100ms", Fields: []string{"Settle"}, Kind: KindDuration},
		durationKnob("not a duration (e.g. 75ms)", func(s *Setup) *time.Duration { return &s.Settle })),
	knob(Knob{Name: "stickiness", Example: "true", Fields: []string{"LeaderStickiness"}, Kind: KindBool},
		boolKnob(func(s *Setup) *bool { return &s.LeaderStickiness })),
	knob(Knob{Name: "stickymode", Example: "until-timeout", Fields: []string{"Stickiness"}, Kind: KindString},
		wordKnob("contact or until-timeout", map[string]func(*Setup){
			"contact":       func(s *Setup) { s.Stickiness = election.StickyByContact },
			"until-timeout": func(s *Setup) { s.Stickiness = election.StickyUntilTimeout },
		})),
	knob(Knob{Name: "diskblocks", Example: "true", Fields: []string{"DiskBlocks"}, Kind: KindBool},
		boolKnob(func(s *Setup) *bool { return &s.DiskBlocks })),
	knob(Knob{Name: "groupcommit", Example: "true", Fields: []string{"GroupCommit"}, Kind: KindBool},
		boolKnob(func(s *Setup) *bool { return &s.GroupCommit })),
	knob(Knob{Name: "leaderwrite", Example: "true", Fields: []string{"LeaderWrite"}, Kind: KindBool},
		boolKnob(func(s *Setup) *bool { return &s.LeaderWrite })),
	knob(Knob{Name: "timerswait", Example: "true", Fields: []string{"TimersWait"}, Kind: KindBool},
		boolKnob(func(s *Setup) *bool { return &s.TimersWait })),
	knob(Knob{Name: "rearmafterterm", Example: "true", Fields: []string{"RearmAfterTermWrite"}, Kind: KindBool},
		boolKnob(func(s *Setup) *bool { return &s.RearmAfterTermWrite })),
	knob(Knob{Name: "keeptimer", Example: "true", Fields: []string{"KeepTimer"}, Kind: KindBool},
		boolKnob(func(s *Setup) *bool { return &s.KeepTimer })),
	knob(Knob{Name: "hbjitter", Example: "true", Fields: []string{"HeartbeatJitter"}, Kind: KindBool},
		boolKnob(func(s *Setup) *bool { return &s.HeartbeatJitter })),
	knob(Knob{Name: "hbperpeer", Example: "true", Fields: []string{"HeartbeatPerPeer"}, Kind: KindBool},
		boolKnob(func(s *Setup) *bool { return &s.HeartbeatPerPeer })),
	knob(Knob{Name: "grantonlyasfollower", Example: "true", Fields: []string{"GrantOnlyAsFollower"}, Kind: KindBool},
		boolKnob(func(s *Setup) *bool { return &s.GrantOnlyAsFollower })),
	knob(Knob{Name: "backoffonrejections", Example: "true", Fields: []string{"BackoffOnRejections"}, Kind: KindBool},
		boolKnob(func(s *Setup) *bool { return &s.BackoffOnRejections })),
	knob(Knob{Name: "heartbeatoffset", Example: "true", Fields: []string{"HeartbeatOffset"}, Kind: KindBool},
		boolKnob(func(s *Setup) *bool { return &s.HeartbeatOffset })),
}

// SetupParams lists the names Setup.Set accepts (Knobs' names).
var SetupParams = func() []string {
	names := make([]string, len(Knobs))
	for i, k := range Knobs {
		names[i] = k.Name
	}
	return names
}()

// Set sets one setting of s from its command-line form (see Knobs):
// nodes=5 (with as many short logs as fit, see WithNodes),
// timeout=150ms-300ms, latency=normal:5ms,2ms (none: none), prevote=true.
// Errors are *sim.FieldError values whose Field is name, wrapping
// ErrInvalidConfig.
func (s *Setup) Set(name, value string) error {
	k, ok := KnobNamed(name)
	if !ok {
		return fieldErr("", name, "unknown parameter (want one of %s)", strings.Join(SetupParams, ", "))
	}
	return k.set(s, value)
}
