package wheel_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/wheel"
)

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mod   func(*wheel.Config)
		field string // "" means valid
	}{
		{"default", func(*wheel.Config) {}, ""},
		{"tick 1ns", func(c *wheel.Config) { c.Tick = 1 }, ""},
		{"tick MaxTick", func(c *wheel.Config) { c.Tick = wheel.MaxTick }, ""},
		{"MaxPending 1", func(c *wheel.Config) { c.MaxPending = 1 }, ""},
		{"with executor and logger", func(c *wheel.Config) {
			c.Executor = wheel.GoExecutor
			c.Logger = hclog.NewNullLogger()
		}, ""},
		{"tick zero", func(c *wheel.Config) { c.Tick = 0 }, "Tick"},
		{"tick negative", func(c *wheel.Config) { c.Tick = -ms }, "Tick"},
		{"tick min int", func(c *wheel.Config) { c.Tick = math.MinInt64 }, "Tick"},
		{"tick above MaxTick", func(c *wheel.Config) { c.Tick = wheel.MaxTick + 1 }, "Tick"},
		{"tick max int", func(c *wheel.Config) { c.Tick = math.MaxInt64 }, "Tick"},
		{"MaxPending negative", func(c *wheel.Config) { c.MaxPending = -1 }, "MaxPending"},
		{"zero Config", func(c *wheel.Config) { *c = wheel.Config{} }, "Tick"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := wheel.DefaultConfig()
			tc.mod(&cfg)
			require.NotPanics(t, func() {
				err := cfg.Validate()
				w, errNew := wheel.New(cfg)
				v, errVirtual := wheel.NewVirtual(cfg)
				if tc.field == "" {
					require.NoError(t, err)
					require.NoError(t, errNew)
					require.NoError(t, errVirtual)
					require.NotNil(t, w)
					require.NotNil(t, v)
					require.Equal(t, cfg.Tick, w.Tick())
					require.False(t, w.IsVirtual())
					require.True(t, v.IsVirtual())
					w.Stop()
					v.Stop()
					return
				}
				require.ErrorIs(t, err, wheel.ErrInvalidConfig)
				var fe *wheel.FieldError
				require.ErrorAs(t, err, &fe)
				require.Equal(t, tc.field, fe.Field)
				require.True(t, strings.HasPrefix(err.Error(), "wheel: invalid config: "+tc.field+" "), "error %q lacks the package prefix", err)
				require.EqualError(t, errNew, err.Error())
				require.EqualError(t, errVirtual, err.Error())
				require.Nil(t, w)
				require.Nil(t, v)
			})
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	cfg := wheel.DefaultConfig()
	require.Equal(t, time.Millisecond, cfg.Tick)
	require.Zero(t, cfg.MaxPending)
	require.Nil(t, cfg.Executor)
	require.NoError(t, cfg.Validate())
}

func TestMaxPending(t *testing.T) {
	v := newVirtual(t, func(c *wheel.Config) { c.MaxPending = 2 })
	r := &recorder{v: v}
	var a, b, c wheel.Timer
	require.NoError(t, a.Init(v.Wheel, r.fn("a")))
	require.NoError(t, b.Init(v.Wheel, r.fn("b")))
	require.NoError(t, c.Init(v.Wheel, r.fn("c")))
	_, err := a.TryReset(10 * ms)
	require.NoError(t, err)
	_, err = b.TryReset(20 * ms)
	require.NoError(t, err)

	// At the limit: new timers are refused...
	wasPending, err := c.TryReset(ms)
	require.ErrorIs(t, err, wheel.ErrTooManyPending)
	require.False(t, wasPending)
	require.False(t, c.Pending())
	require.False(t, c.Reset(ms))
	af, err := v.AfterFunc(ms, r.fn("af"))
	require.ErrorIs(t, err, wheel.ErrTooManyPending)
	require.Nil(t, af)
	require.Equal(t, int64(3), v.Stats().Rejected)

	// ...but pending ones can still move, later and earlier.
	wasPending, err = a.TryReset(30 * ms)
	require.NoError(t, err)
	require.True(t, wasPending)
	wasPending, err = b.TryReset(5 * ms)
	require.NoError(t, err)
	require.True(t, wasPending)
	require.Equal(t, int64(2), v.Stats().Pending)

	// A Stop frees a place.
	require.True(t, a.Stop())
	_, err = c.TryReset(ms)
	require.NoError(t, err)
	_, err = a.TryReset(ms)
	require.ErrorIs(t, err, wheel.ErrTooManyPending)

	// So does a fire.
	require.Equal(t, 1, v.AdvanceTo(ms))
	_, err = a.TryReset(ms)
	require.NoError(t, err)

	v.RunUntilIdle()
	require.Equal(t, []string{"c@1ms", "a@2ms", "b@5ms"}, r.fires)
	s := requireStatsAddUp(t, v.Wheel)
	require.Equal(t, int64(4), s.Rejected)
	require.Equal(t, int64(4), s.Scheduled)
}

func TestShared(t *testing.T) {
	s := wheel.Shared()
	require.NotNil(t, s)
	require.Same(t, s, wheel.Shared())
	require.False(t, s.IsVirtual())
	require.Equal(t, wheel.DefaultConfig().Tick, s.Tick())
	require.Nil(t, s.Stop(), "Stop of the shared wheel is refused")
	select {
	case <-s.Done():
		t.Fatal("the shared wheel reports done after a refused Stop")
	default:
	}
	done := make(chan struct{})
	_, err := s.AfterFunc(0, func() { close(done) })
	require.NoError(t, err, "the shared wheel keeps scheduling after Stop")
	recv(t, done, "a timer on the shared wheel")
}
