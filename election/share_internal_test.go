package election

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-metrics"
	"github.com/stretchr/testify/require"
)

// TestSharedMetricsKeepEachNodesRole: nodes that share a metrics state
// keep their own last role, so that a step-down is labelled with the
// role its node left, whatever the other nodes did in between.
func TestSharedMetricsKeepEachNodesRole(t *testing.T) {
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	m := newNodeMetrics(Config{ID: 1, Metrics: sink})
	var a, b Role
	m.event(&Event{Type: EventRoleChange, Role: Candidate}, &a)
	m.event(&Event{Type: EventRoleChange, Role: Follower}, &b)
	m.event(&Event{Type: EventStepDown, Role: Follower, Reason: ReasonHigherTerm}, &a)
	var keys []string
	for _, iv := range sink.Data() {
		for k := range iv.Counters {
			if strings.Contains(k, "stepdown") {
				keys = append(keys, k)
			}
		}
	}
	require.Len(t, keys, 1)
	require.Contains(t, keys[0], "from=candidate", "the step-down of the node that was a candidate")
}

// TestSharedMetricsConcurrentEvents: the nodes that share a metrics state
// report events on their own goroutines at once (run it with -race), and
// every step-down is counted, labelled with the role its node left.
func TestSharedMetricsConcurrentEvents(t *testing.T) {
	sink := metrics.NewInmemSink(time.Hour, time.Hour)
	m := newNodeMetrics(Config{ID: 1, Metrics: sink})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var role Role
			for j := range 100 {
				m.event(&Event{Type: EventRoleChange, Role: Candidate}, &role)
				m.event(&Event{Type: EventStepDown, Role: Follower, Reason: fmt.Sprintf("reason %d", (i+j)%7)}, &role)
				m.event(&Event{Type: EventVoteDenied, Reason: ReasonHigherTerm}, &role)
			}
		}()
	}
	wg.Wait()
	var stepDowns float64
	for _, iv := range sink.Data() {
		for k, c := range iv.Counters {
			if strings.Contains(k, "stepdown") {
				require.Contains(t, k, "from=candidate", "every node left the candidate role")
				stepDowns += c.Sum
			}
		}
	}
	require.Equal(t, float64(4*100), stepDowns)
}
