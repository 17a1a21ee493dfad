package experiment

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/sim"
)

func TestParamsListsEveryField(t *testing.T) {
	ps := Failover{PaperModel()}.Result(nil).Setup.Params()
	names := map[string]any{}
	for _, p := range ps {
		names[p.Name] = p.Value
	}
	require.Equal(t, 5, names["nodes"])
	require.Equal(t, 150.0, names["timeout_min_ms"])
	require.Equal(t, 75.0, names["heartbeat_ms"], "the heartbeat is explicit")
	require.Equal(t, "normal:250µs,50µs", names["latency"])
	require.Equal(t, true, names["disk_blocks"])
	require.Equal(t, 1.0, names["granularity_ms"])
	require.Equal(t, "uniform:0s,200µs", names["timer_lateness"])
	require.Equal(t, 60000.0, names["max_time_ms"])
	// Every exported field (the embedded Network's included) is listed.
	n := 0
	var count func(reflect.Type)
	count = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				count(f.Type)
			} else if f.IsExported() && f.Tag.Get("param") != "omitzero" {
				n++
			}
		}
	}
	count(reflect.TypeFor[Setup]())
	require.Len(t, ps, n)
	// An opt-in field appears once it is set.
	on := PaperModel()
	on.TimersAtCrash = true
	require.Len(t, on.Params(), n+1)
	require.Contains(t, on.Params(), Param{"timers_at_crash", true})
	require.Equal(t, "timeout_min", snake("TimeoutMin"))
	require.Equal(t, "pre_vote", snake("PreVote"))
}

func TestMeasurable(t *testing.T) {
	ok := PaperModel()
	require.NoError(t, ok.Measurable(4))
	for _, tc := range []struct {
		field string
		edit  func(*Setup)
		alive int
	}{
		{"Nodes", func(s *Setup) { *s = s.WithNodes(2) }, 1},
		{"Nodes", func(s *Setup) { *s = s.WithNodes(1) }, 0},
		{"TimeoutMax", func(s *Setup) { s.TimeoutMin, s.TimeoutMax = 3600e9, 7200e9 }, 4},
		{"Latency", func(s *Setup) { s.Latency = sim.Fixed(200 * time.Millisecond) }, 4},
		{"Loss", func(s *Setup) { s.Loss = 0.999 }, 4},
	} {
		s := PaperModel()
		tc.edit(&s)
		require.NoError(t, s.Validate(), "well formed")
		err := s.Measurable(tc.alive)
		require.ErrorIs(t, err, ErrInvalidConfig)
		var fe *sim.FieldError
		require.True(t, errors.As(err, &fe))
		require.Equal(t, tc.field, fe.Field)
	}
	s := PaperModel()
	s.Loss = 0.5
	require.NoError(t, s.Measurable(4), "half the messages lost still elects in time")
}
