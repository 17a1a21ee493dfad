package experiment

import (
	"reflect"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// notKnobs are the Setup fields no knob sets: a mode or a map a preset or
// a program sets, with no command-line form.
var notKnobs = []string{"Links", "Detection", "Tick", "RestartTimerOnFollow", "StepDownOnVoteTimeout"}

// TestKnobsCoverSetup: every field of Setup (and of its sim.Network) is
// set by a knob or listed in notKnobs, so a field added without a knob
// fails here.
func TestKnobsCoverSetup(t *testing.T) {
	covered := map[string]bool{}
	for _, k := range Knobs {
		for _, f := range k.Fields {
			covered[f] = true
		}
	}
	var walk func(reflect.Type)
	walk = func(rt reflect.Type) {
		for i := range rt.NumField() {
			f := rt.Field(i)
			if f.Anonymous {
				walk(f.Type)
				continue
			}
			require.True(t, covered[f.Name] || slices.Contains(notKnobs, f.Name), "Setup.%s has no knob (add one to Knobs, or to notKnobs)", f.Name)
		}
	}
	walk(reflect.TypeFor[Setup]())
}

// TestKnobsDeclaredOnce: each knob's names are unique, its example sets
// its fields through Set (and turns it on), and the JSON keys it claims
// are the ones Params prints.
func TestKnobsDeclaredOnce(t *testing.T) {
	names, flags := map[string]bool{}, map[string]bool{}
	for _, k := range Knobs {
		for _, n := range append([]string{k.Name}, k.Old...) {
			require.False(t, names[n], "knob name %q declared twice", n)
			names[n] = true
		}
		if k.Flag != "" {
			require.False(t, flags[k.Flag], "flag --%s declared twice", k.Flag)
			flags[k.Flag] = true
			require.NotEmpty(t, k.Help, "--%s has no help", k.Flag)
		}
		require.NotEmpty(t, k.Fields, k.Name)
		require.NotEmpty(t, k.Example, k.Name)

		s := PlainModel()
		require.NoError(t, s.Set(k.Name, k.Example), k.Name)
		require.True(t, k.On(k.Example), "%s=%s should turn it on", k.Name, k.Example)
		params := map[string]bool{}
		for _, p := range s.Params() {
			params[p.Name] = true
		}
		for _, key := range k.Keys() {
			require.True(t, params[key], "%s: Params has no key %q", k.Name, key)
		}
		if k.Kind == KindBool {
			require.False(t, k.On("false"), k.Name)
		}
		requireField(t, s.Set(k.Name, "x?"), k.Name)
	}
	require.Equal(t, len(Knobs), len(SetupParams))
}

// TestKnobEngines: a knob of the simulated servers is refused only by the
// engines that do not run them; one honoured everywhere by none.
func TestKnobEngines(t *testing.T) {
	k, ok := KnobOfFlag("send-gap")
	require.True(t, ok)
	require.True(t, k.Honours(EngineRaftick) && k.Honours(EngineRealtime))
	require.False(t, k.Honours(EngineEtcd) || k.Honours(EngineHashicorp))
	k, _ = KnobOfFlag("lateness-spread")
	require.False(t, k.Honours(EngineRealtime), "real timers have their own lateness")
	k, _ = KnobOfFlag("latency")
	require.True(t, k.Honours(EngineEtcd))
	k, ok = KnobOfFlag("noise")
	require.True(t, ok && k.Name == "lateness", "old flag names still resolve")
}
