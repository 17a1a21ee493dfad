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
// "LeaderElected t1 Leader leader=1"; it is e.Text().
func EventText(e election.Event) string { return e.Text() }
