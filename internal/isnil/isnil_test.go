package isnil_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/internal/isnil"
)

type fn func()

type ptr struct{}

func (*ptr) M() {}

func TestIs(t *testing.T) {
	var f fn
	var p *ptr
	var i interface{ M() } = p
	require.True(t, isnil.Is(nil))
	require.True(t, isnil.Is(f))
	require.True(t, isnil.Is(p))
	require.True(t, isnil.Is(i))
	require.False(t, isnil.Is(fn(func() {})))
	require.False(t, isnil.Is(&ptr{}))
	require.False(t, isnil.Is(0))
	require.False(t, isnil.Is(ptr{}))
}
