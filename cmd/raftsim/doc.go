// Command raftsim runs the raftick cluster simulator: leader-election
// experiments on simulated Raft clusters in virtual time, reproducible
// from a seed.
//
//	raftsim paper                      # reproduce Figure 16 of the Raft paper
//	raftsim failover --timeout 150ms-300ms --latency normal:5ms,2ms
//	raftsim bootstrap --nodes 3
//	raftsim failover --engine etcd --timeout 1s  # real etcd raft nodes; --model etcd simulates them
//	raftsim splitvote --nodes 5 --alive 4 --l 0.01,0.1,0.2
//	raftsim compare --timeout 50-100ms --latency fixed:1ms  # the virtual model against raftick on real time
//	raftsim sweep --over timeout=150-155ms,150-200ms --over latency=fixed:1ms;fixed:5ms
//	raftsim tune --latency lognormal:5ms,0.8 --max-elections 1
//	raftsim failover --crash 2 --crash-offset 0 --until majority
//	raftsim failover --timeout 150-151ms --candidate-timeout 75-150ms --candidate-backoff
//	raftsim partition --model all --shape bare-quorum,one-way
//	raftsim paper --trials 100000 --shard 3/8 > shard-3.jsonl   # one of 8 processes
//	raftsim merge shard-*.jsonl                                 # the whole run's output
//
// Every subcommand has --help. Results go to stdout (a table, --json:
// JSON Lines of self-describing objects, or --csv with the same fields,
// one schema for every subcommand: raftsim help records);
// progress bars, errors and where a --plot figure (PDF, SVG or PNG) went
// go to stderr. Setups that cannot measure what they are asked are refused
// before anything runs. Bad flags or values exit
// with status 2, a failed trial (a simulation that broke) with status 1
// and the command that reproduces it. An interrupt (Ctrl-C) stops the
// trials that are running, prints what finished marked as interrupted
// (every table and record, with the trials requested and finished), gives
// no verdict or recommendation and exits with status 130; a second
// interrupt exits at once.
//
// The command is thin wiring: flags become a sim/experiment value, which
// runs on the sim engine (or, with --engine hashicorp, on
// sim/engines/hashicorp; with --engine etcd, on sim/engines/etcd; with
// --engine raftick-realtime, on sim/engines/realtime), and sim/report,
// sim/report/twosample and sim/report/plot print it.
package main
