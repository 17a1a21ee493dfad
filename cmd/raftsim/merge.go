package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) mergeCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "merge FILES...",
		Short: "Combine the outputs of --shard runs into the output of the whole run",
		Long: `merge reads the files written by the N runs of one command with
--shard 0/N ... --shard N-1/N, checks that they are all there (each once,
same raftsim version, same command line), and prints exactly what the
command prints without --shard (byte for byte for the same seed): the
table, --json, --csv, and the --plot figure.

Every trial i of a run draws from its own random stream (seed, i), and
shard K runs the trials i with i mod N = K, so the shards together ran
every trial of the unsharded command once. Run the shards anywhere: a
Kubernetes Indexed Job, a Slurm array, GNU parallel (see the README).`,
		Example: `  for k in 0 1 2 3; do raftsim paper --trials 100000 --shard $k/4 > shard-$k.jsonl & done; wait
  raftsim merge shard-*.jsonl
  parallel raftsim sweep --over nodes=3,5,7 --json --shard {}/8 '>' s{}.jsonl ::: 0 1 2 3 4 5 6 7
  raftsim merge s*.jsonl > sweep.jsonl`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("merge: give the shard files to merge (see --help)")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, files []string) error {
			if a.merged != nil {
				return usageError{fmt.Errorf("merge: the shards are of another merge")}
			}
			h, accs, err := readShards(files)
			if err != nil {
				return usageError{fmt.Errorf("merge: %w", err)}
			}
			if len(h.Args) == 0 || h.Args[0] == "merge" {
				return usageError{fmt.Errorf("merge: the shards record no command")}
			}
			// Run the shards' command line again, with the merged
			// outcomes in place of its trials.
			b := &app{stdout: a.stdout, stderr: a.stderr, args: h.Args, merged: accs, mergedTrials: h.Trials}
			return b.execute(cmd.Context())
		},
	}
}
