package sim

import (
	"fmt"
	"time"

	"github.com/raftick/raftick/election"
)

// FormatEvent formats one line of a trace: time (ms with µs precision),
// node and what happened.
func FormatEvent(at time.Duration, node election.ID, what string) string {
	who := "  -"
	if node != election.None {
		who = fmt.Sprintf("n%-2d", node)
	}
	return fmt.Sprintf("%12.3fms  %s  %s", float64(at)/1e6, who, what)
}

// EventText formats an election.Event without its time and node, e.g.
// "LeaderElected t1 Leader leader=1".
func EventText(e election.Event) string {
	s := fmt.Sprintf("%s t%d %s", e.Type, e.Term, e.Role)
	if e.Leader != election.None {
		s += fmt.Sprintf(" leader=%d", e.Leader)
	}
	if e.Peer != election.None {
		s += fmt.Sprintf(" peer=%d", e.Peer)
	}
	if e.PreVote {
		s += " prevote"
	}
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	return s
}
