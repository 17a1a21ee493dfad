package pebblestore

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/multiraft"
)

// BenchmarkSave writes batches of HardStates with one synced commit each
// on the disk under the test's temporary directory (not a tmpfs: check
// with df), and, for comparison in the same run, the same states with one
// election.FileStorage per group (a file, an fsync, a rename and a
// directory fsync per state). saves/s counts states, syncs/s durable
// writes.
//
//	go test ./multiraft/pebblestore -run '^$' -bench Save -benchtime 2s
func BenchmarkSave(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("store=pebble/batch=%d", n), func(b *testing.B) {
			s, err := open(b.TempDir(), options{fs: vfs.Default, ballast: ballastSize, logger: quiet()})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			term := uint64(0)
			for b.Loop() {
				term++
				if err := s.Save(states(0, n, term)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "saves/s")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "syncs/s")
		})
	}
	b.Run("store=file/batch=1", func(b *testing.B) {
		dir := b.TempDir()
		sts := make([]*election.FileStorage, 64)
		for i := range sts {
			st, err := election.NewFileStorage(filepath.Join(dir, fmt.Sprint(i)))
			if err != nil {
				b.Fatal(err)
			}
			sts[i] = st
		}
		i := 0
		for b.Loop() {
			i++
			if err := sts[i%len(sts)].Save(election.HardState{Term: uint64(i), Vote: 1}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "saves/s")
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "syncs/s")
	})
}

// BenchmarkLoadAll loads 100,000 groups' states from a reopened store: a
// restarting host's first read.
//
//	go test ./multiraft/pebblestore -run '^$' -bench LoadAll -benchtime 3x
func BenchmarkLoadAll(b *testing.B) {
	const groups = 100_000
	dir := b.TempDir()
	s, err := open(dir, options{fs: vfs.Default, ballast: ballastSize, logger: quiet()})
	if err != nil {
		b.Fatal(err)
	}
	for from := 0; from < groups; from += 10_000 {
		if err := s.Save(states(from, 10_000, 7)); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s, err := open(dir, options{fs: vfs.Default, ballast: ballastSize, logger: quiet()})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		if err := s.LoadAll(func(multiraft.GroupID, election.HardState) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		if n != groups {
			b.Fatalf("loaded %d groups", n)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/open+load")
}
