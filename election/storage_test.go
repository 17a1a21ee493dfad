package election_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
)

func TestMemoryStorage(t *testing.T) {
	s := election.NewMemoryStorage()
	hs, err := s.Load()
	require.NoError(t, err)
	require.Equal(t, election.HardState{}, hs)
	require.NoError(t, s.Save(election.HardState{Term: 3, Vote: 2}))
	boom := errors.New("boom")
	s.SetSaveError(boom)
	require.ErrorIs(t, s.Save(election.HardState{Term: 4}), boom)
	hs, _ = s.Load()
	require.Equal(t, election.HardState{Term: 3, Vote: 2}, hs, "a failed Save changes nothing")
	require.Equal(t, int64(1), s.Saves())
}

func TestFileStorage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hardstate")
	s, err := election.NewFileStorage(path)
	require.NoError(t, err)
	require.Equal(t, path, s.Path())
	hs, err := s.Load()
	require.NoError(t, err)
	require.Equal(t, election.HardState{}, hs, "missing file: fresh node")
	require.NoError(t, s.Save(election.HardState{Term: 7, Vote: 3}))
	require.NoError(t, s.Save(election.HardState{Term: 8, Vote: 1}))

	// A new FileStorage (a restarted process) reads the last state.
	s2, err := election.NewFileStorage(path)
	require.NoError(t, err)
	hs, err = s2.Load()
	require.NoError(t, err)
	require.Equal(t, election.HardState{Term: 8, Vote: 1}, hs)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary files left behind")
}

func TestFileStorageErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := election.NewFileStorage("")
	require.Error(t, err)
	_, err = election.NewFileStorage(filepath.Join(dir, "missing", "hs"))
	require.Error(t, err)
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o600))
	_, err = election.NewFileStorage(filepath.Join(notDir, "hs"))
	require.ErrorContains(t, err, "not a directory")

	for name, content := range map[string]string{
		"garbage":      "hello\n",
		"bad checksum": "raftick-election-hardstate v1 term=9 vote=1 crc=00000000\n",
		"bad header":   "other v9 term=9 vote=1 crc=00000000\n",
		"empty":        "",
	} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
		_, err := election.NewFileStorage(p)
		require.ErrorIs(t, err, election.ErrCorrupt, name)
	}
	// Flipping one digit of a valid file is detected.
	p := filepath.Join(dir, "flip")
	s, err := election.NewFileStorage(p)
	require.NoError(t, err)
	require.NoError(t, s.Save(election.HardState{Term: 12, Vote: 3}))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	b = []byte(string(b[:len("raftick-election-hardstate v1 term=")]) + "9" + string(b[len("raftick-election-hardstate v1 term=")+1:]))
	require.NoError(t, os.WriteFile(p, b, 0o600))
	_, err = s.Load()
	require.ErrorIs(t, err, election.ErrCorrupt)
}

// TestRestartFromFileStorage: a node restarted on its FileStorage keeps
// its term and vote and refuses a second vote in that term.
func TestRestartFromFileStorage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n1")
	v := newVirtual(t)
	var sent []election.Message
	tr := election.TransportFunc(func(m election.Message) { sent = append(sent, m) })
	cfg := validConfig()
	st, err := election.NewFileStorage(path)
	require.NoError(t, err)
	n, err := election.NewNode(cfg, v.Wheel, tr, st, election.StaticLog{})
	require.NoError(t, err)
	require.NoError(t, n.Start())
	n.Step(election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 4})
	require.True(t, sent[0].Granted)
	n.Stop()

	st2, err := election.NewFileStorage(path)
	require.NoError(t, err)
	n2, err := election.NewNode(cfg, v.Wheel, tr, st2, election.StaticLog{})
	require.NoError(t, err)
	require.NoError(t, n2.Start())
	s := n2.Status()
	require.Equal(t, uint64(4), s.Term)
	require.Equal(t, election.ID(2), s.Vote)
	require.Equal(t, election.Follower, s.Role)
	n2.Step(election.Message{Type: election.MsgVote, From: 3, To: 1, Term: 4})
	require.False(t, sent[1].Granted, "one vote per term, across restarts")
	n2.Stop()
}

func TestStorageFailures(t *testing.T) {
	boom := errors.New("boom")

	// A vote that cannot be persisted is not granted and no reply leaves.
	p := newProbe(t, nil).start(t)
	p.st.SetSaveError(boom)
	p.n.Step(election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 1})
	require.Empty(t, p.take())
	require.Equal(t, uint64(0), p.n.Status().Term, "term change not persisted, not applied")
	require.Equal(t, int64(1), p.n.Stats().StorageErrors)
	require.Contains(t, p.eventsOf(election.EventIgnored)[0].Reason, "boom")

	// A candidate that cannot persist its own vote does not campaign.
	p.runToElection2(t, 3*et)
	require.Equal(t, election.Follower, p.n.Status().Role)
	require.Empty(t, p.take())
	p.st.SetSaveError(nil)
	p.runToElection(t)

	// Start fails when Load fails.
	v := newVirtual(t)
	n, err := election.NewNode(validConfig(), v.Wheel, election.TransportFunc(func(election.Message) {}), failingLoad{}, election.StaticLog{})
	require.NoError(t, err)
	require.ErrorIs(t, n.Start(), boomLoad)
	require.Equal(t, int64(1), n.Stats().StorageErrors)
}

// runToElection2 advances d and reports nothing; used where no election may happen.
func (p *probe) runToElection2(t *testing.T, d time.Duration) {
	t.Helper()
	p.v.AdvanceBy(d)
}

var boomLoad = errors.New("load failed")

type failingLoad struct{}

func (failingLoad) Load() (election.HardState, error) { return election.HardState{}, boomLoad }

func (failingLoad) Save(election.HardState) error { return nil }
