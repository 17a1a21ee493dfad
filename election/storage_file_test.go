package election_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/raftick/raftick/election"
)

// TestFileStorageDirSyncError is issue 10, defect 5: a failed directory
// sync after the rename fails Save (the vote is not durable).
func TestFileStorageDirSyncError(t *testing.T) {
	s, err := election.NewFileStorage(filepath.Join(t.TempDir(), "hs"))
	require.NoError(t, err)
	boom := errors.New("dir sync failed")
	restore := election.SetSyncDir(func(string) error { return boom })
	defer restore()
	err = s.Save(election.HardState{Term: 3, Vote: 2})
	require.ErrorIs(t, err, boom)
	require.ErrorContains(t, err, "sync directory")
	restore()
	require.NoError(t, s.Save(election.HardState{Term: 4, Vote: 2}))
}

// loadBounded runs NewFileStorage(path) and fails the test if it does not
// return within a generous bound (it must never wait for a writer).
// unblock is called to release a Load that hangs.
func loadBounded(t *testing.T, path string, unblock func()) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := election.NewFileStorage(path)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		unblock()
		<-done
		t.Fatalf("NewFileStorage(%s) blocked", path)
		return nil
	}
}

// TestFileStorageRefusesNonRegular is issue 10, defect 6: a FIFO at the
// path is refused at once (os.ReadFile waited for a writer), and a device
// or a directory is refused without reading it.
func TestFileStorageRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	err := loadBounded(t, fifo, func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
		}
	})
	require.ErrorIs(t, err, election.ErrCorrupt)
	require.ErrorContains(t, err, "not a regular file")

	for _, p := range []string{"/dev/zero", dir} {
		_, err := election.NewFileStorage(p)
		require.ErrorContains(t, err, "not a regular file", p)
	}
}

// TestFileStorageRefusesLongAndTrailing: a file longer than
// MaxHardStateFileSize, and a valid record followed by anything, are
// corrupt.
func TestFileStorageRefusesLongAndTrailing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hs")
	s, err := election.NewFileStorage(path)
	require.NoError(t, err)
	require.NoError(t, s.Save(election.HardState{Term: 7, Vote: 3}))
	good, err := os.ReadFile(path)
	require.NoError(t, err)
	rec := strings.TrimSuffix(string(good), "\n")
	cases := []struct{ content, want string }{
		{string(good) + "x", "1 bytes after the record"},
		{string(good) + "\n", "1 bytes after the record"},
		{rec + "\nterm=9\n", "7 bytes after the record"},
		{rec, "not terminated by a newline"},
		{rec + " \n", "not in canonical form"},
		{string(good) + strings.Repeat("#", election.MaxHardStateFileSize), "longer than 1024 bytes"},
	}
	for _, tc := range cases {
		require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
		_, err := s.Load()
		require.ErrorIs(t, err, election.ErrCorrupt, "%q", tc.content)
		require.ErrorContains(t, err, tc.want, "%q", tc.content)
	}
	require.NoError(t, os.WriteFile(path, good, 0o600))
	hs, err := s.Load()
	require.NoError(t, err)
	require.Equal(t, election.HardState{Term: 7, Vote: 3}, hs)
}

// TestFileStorageCleansTempFiles: temporary files of a Save interrupted
// between CreateTemp and Rename are removed by NewFileStorage; files that
// only look similar are kept.
func TestFileStorageCleansTempFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hs")
	s, err := election.NewFileStorage(path)
	require.NoError(t, err)
	require.NoError(t, s.Save(election.HardState{Term: 2, Vote: 1}))
	for _, name := range []string{"hs.tmp123456", "hs.tmp9", "hs.tmpl", "hs.tmp", "other.tmp1"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("partial"), 0o600))
	}
	_, err = election.NewFileStorage(path)
	require.NoError(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{"hs", "hs.tmpl", "hs.tmp", "other.tmp1"}, names)
}

// TestFileStorageFollowsSymlink is issue 32, defect 7: the first Save
// replaced a symbolic link at the path with a plain file, leaving the
// link's target stale. Save now replaces the target, beside it.
func TestFileStorageFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	require.NoError(t, os.Mkdir(data, 0o700))
	target := filepath.Join(data, "hs")
	link := filepath.Join(dir, "hs-link")
	require.NoError(t, os.Symlink("data/hs", link)) // relative, dangling until the first Save
	chain := filepath.Join(dir, "hs-chain")
	require.NoError(t, os.Symlink(link, chain))

	s, err := election.NewFileStorage(chain)
	require.NoError(t, err)
	for _, hs := range []election.HardState{{Term: 1, Vote: 2}, {Term: 2, Vote: 3}} {
		require.NoError(t, s.Save(hs))
		for _, p := range []string{chain, link} {
			fi, err := os.Lstat(p)
			require.NoError(t, err)
			require.NotZero(t, fi.Mode()&os.ModeSymlink, "%s is still a link", p)
		}
		direct, err := election.NewFileStorage(target)
		require.NoError(t, err)
		require.Equal(t, hs, must(direct.Load()), "the link's target holds the state")
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 3, "no temporary file beside the link")

	// A relative target with ".." behind a linked directory: the system
	// resolves ".." from the link's real directory, and so must Save, or
	// Save and Load would use different files.
	nest := filepath.Join(dir, "nest")
	require.NoError(t, os.MkdirAll(filepath.Join(nest, "b", "c"), 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(nest, "b", "data"), 0o700))
	require.NoError(t, os.Mkdir(filepath.Join(nest, "a"), 0o700))
	require.NoError(t, os.Symlink(filepath.Join(nest, "b", "c"), filepath.Join(nest, "a", "sym")))
	require.NoError(t, os.Symlink("../data/hs", filepath.Join(nest, "b", "c", "hs")))
	ns, err := election.NewFileStorage(filepath.Join(nest, "a", "sym", "hs"))
	require.NoError(t, err)
	require.NoError(t, ns.Save(election.HardState{Term: 7, Vote: 2}))
	require.Equal(t, election.HardState{Term: 7, Vote: 2}, must(ns.Load()))
	_, err = os.Stat(filepath.Join(nest, "b", "data", "hs"))
	require.NoError(t, err, "the file the system resolves the link to")
	_, err = os.Stat(filepath.Join(nest, "a", "data"))
	require.ErrorIs(t, err, os.ErrNotExist)

	// A loop of links is an error, not a hang.
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	require.NoError(t, os.Symlink(b, a))
	require.NoError(t, os.Symlink(a, b))
	_, err = election.NewFileStorage(a)
	require.Error(t, err)
}

// TestFileStorageUnsyncedSaveNotActedOn is issue 32, defect 7: after a
// Save whose directory sync failed, a node restarted on the storage acted
// on the vote that Save reported as failed, which a crash could still
// undo. Until a directory sync succeeds, Load (and so Start) and
// NewFileStorage now fail; once one succeeds the state is durable and
// loads.
func TestFileStorageUnsyncedSaveNotActedOn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hs")
	st, err := election.NewFileStorage(path)
	require.NoError(t, err)
	require.NoError(t, st.Save(election.HardState{Term: 1}))

	p := newProbe(t, nil)
	n, err := election.NewNode(p.n.Config(), p.v.Wheel, election.TransportFunc(func(m election.Message) { p.msgs = append(p.msgs, m) }), st, p.log)
	require.NoError(t, err)
	require.NoError(t, n.Start())
	boom := errors.New("dir sync failed")
	restore := election.SetSyncDir(func(string) error { return boom })
	defer restore()
	n.Step(election.Message{Type: election.MsgVote, From: 2, To: 1, Term: 2})
	require.Empty(t, p.take(), "no answer: the vote is not durable")
	n.Stop()

	again, err := election.NewNode(p.n.Config(), p.v.Wheel, election.TransportFunc(func(m election.Message) { p.msgs = append(p.msgs, m) }), st, p.log)
	require.NoError(t, err)
	require.ErrorIs(t, again.Start(), boom, "a restarted node does not act on the failed save")
	_, err = election.NewFileStorage(path)
	require.ErrorIs(t, err, boom, "nor does a new process")
	require.ErrorIs(t, st.Save(election.HardState{Term: 3}), boom)

	restore()
	require.NoError(t, again.Start(), "the directory synced: the state is durable now")
	require.Equal(t, election.Status{ID: 1, Role: election.Follower, Term: 2, Vote: 2, Started: true}, again.Status())
	again.Stop()
}

// crashFS models, at FileStorage's two sync points, a disk that loses on
// a crash whatever was not synced: a file's data survives only if it was
// synced (syncFile) after it was last written, and a rename only if its
// directory was synced after it. It records, at each directory sync, what
// the hard state file would hold after a crash: its contents if the file
// that was renamed into place had its data synced, and nothing (the
// zero-length file of a rename whose data never reached the disk) if not.
type crashFS struct {
	t       *testing.T
	path    string
	synced  map[string]string // data synced, by contents
	durable *string           // the file after a crash; nil: as before the first sync
}

func newCrashFS(t *testing.T, path string) *crashFS {
	c := &crashFS{t: t, path: path, synced: map[string]string{}}
	t.Cleanup(election.SetSyncFile(func(f *os.File) error {
		b, err := os.ReadFile(f.Name())
		require.NoError(t, err)
		c.synced[string(b)] = f.Name()
		return f.Sync()
	}))
	t.Cleanup(election.SetSyncDir(func(dir string) error {
		b, err := os.ReadFile(c.path)
		if errors.Is(err, os.ErrNotExist) {
			return nil // no file yet (NewFileStorage syncs the directory too)
		}
		require.NoError(t, err)
		d := ""
		if _, ok := c.synced[string(b)]; ok {
			d = string(b)
		}
		c.durable = &d
		return nil
	}))
	return c
}

// crash puts the hard state file in the state a crash leaves.
func (c *crashFS) crash() {
	if c.durable == nil {
		return
	}
	require.NoError(c.t, os.WriteFile(c.path, []byte(*c.durable), 0o600))
}

// TestFileStorageSurvivesCrash: every Save that returned nil is what a
// FileStorage opened after a crash loads, on a disk that loses unsynced
// writes (crashFS). It fails if Save skips its file's fsync (the renamed
// file is empty after the crash) or its directory's.
func TestFileStorageSurvivesCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hs")
	fs := newCrashFS(t, path)
	s, err := election.NewFileStorage(path)
	require.NoError(t, err)
	for i, hs := range []election.HardState{{Term: 1, Vote: 2}, {Term: 2, Vote: 3}, {Term: 7}} {
		require.NoError(t, s.Save(hs))
		fs.crash()
		s2, err := election.NewFileStorage(path)
		require.NoError(t, err)
		got, err := s2.Load()
		require.NoError(t, err, "save %d: load after a crash", i)
		require.Equal(t, hs, got, "save %d: the state after a crash", i)
	}
}
