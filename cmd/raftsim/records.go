package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/raftick/raftick/sim/report"
)

// The record schema of --json and --csv: one definition for every
// subcommand, printed by "raftsim help records", copied into
// docs/raftsim-records.md and checked against every subcommand's output
// by TestRecordsFollowTheSchema.

// presence says when a field is in a JSON record (a CSV row has every
// column of its header; a field absent from JSON is an empty cell).
type presence int

const (
	always        presence = iota // in every record of its kind
	optional                      // left out when it does not apply or is zero
	unlessStopped                 // left out when the run was interrupted
)

// fieldSpec is one field of a record: its JSON name and type and what it
// means.
type fieldSpec struct {
	name, typ string
	when      presence
	doc       string
}

// recordSpec is one kind of record (the "record" field).
type recordSpec struct {
	kind, from, doc string
	fields          []fieldSpec
}

// envelope are the fields every record starts with.
var envelope = []fieldSpec{
	{"record", "string", always, "the kind of record: result, tune-candidate, tune-verdict, partition or multiraft"},
	{"schema", "integer", always, fmt.Sprintf("the version of this schema (%d); it rises when a field is renamed, changes meaning or goes away", report.SchemaVersion)},
	{"tool", "string", always, `"raftsim"`},
	{"version", "string", always, "the version of raftsim that wrote the record (raftsim --version)"},
	{"command", "string", always, "the subcommand: paper, failover, bootstrap, splitvote, sweep, tune, partition, multiraft or ticks"},
	{"model", "string", always, "the model: the --model preset; splitvote-race or splitvote-cluster (--sv-model); multiraft"},
	{"interrupted", "boolean", always, "true if an interrupt stopped the run: the record holds only the trials that finished, and the run gives no verdict"},
	{"seed", "integer", always, "the --seed; the same seed and flags give the same records"},
	{"trials", "integer", always, "trials that finished (partition: windows; multiraft: runs, 0 or 1)"},
	{"trials_requested", "integer", always, "trials asked for: equal to trials unless interrupted"},
	{"params", "object", always, "every model parameter, one member each, durations in ms (CSV: one params.NAME column each); heartbeat_ms is the interval used, 0 only where none is fixed: a tune verdict's base setup (each candidate uses half its minimum) and the hashicorp engine (hashicorp/raft sets its own)"},
}

// stats are the statistics of measured times, in ms.
var stats = []fieldSpec{
	{"min_ms", "number", always, "the shortest time"},
	{"p10_ms", "number", always, "10th percentile"},
	{"p50_ms", "number", always, "median"},
	{"mean_ms", "number", always, "mean"},
	{"p90_ms", "number", always, "90th percentile"},
	{"p95_ms", "number", always, "95th percentile"},
	{"p99_ms", "number", always, "99th percentile"},
	{"p999_ms", "number", always, "99.9th percentile"},
	{"max_ms", "number", always, "the longest time"},
	{"lower_bounds", "array", always, "the statistics above that are only lower bounds because of censored trials"},
}

var recordSpecs = []recordSpec{
	{"result", "paper, failover, bootstrap, splitvote, sweep, ticks", "one per table row", concat([]fieldSpec{
		{"experiment", "string", always, "failover, bootstrap or splitvote"},
		{"label", "string", optional, "the row's label: the timeout range, or the swept parameters"},
		{"nodes", "integer", always, "servers in the cluster"},
		{"alive", "integer", optional, "servers running during the measurement"},
		{"timeout_min_ms", "number", always, "election timeout range, low end"},
		{"timeout_max_ms", "number", always, "election timeout range, high end"},
		{"heartbeat_ms", "number", optional, "the leader's heartbeat interval, as used"},
		{"latency", "string", optional, "one-way message latency spec"},
		{"disk", "string", optional, "disk write time spec"},
		{"loss", "number", optional, "probability that a message is lost"},
		{"prevote", "boolean", optional, "pre-vote on"},
		{"checkquorum", "boolean", optional, "check-quorum on"},
		{"engine", "string", optional, "what ran the trials, as --engine names them: raftick, etcd or hashicorp"},
		{"sv_model", "string", optional, "splitvote: race or cluster"},
		{"latency_fraction", "number", optional, "splitvote: the latency as a fraction l of the timeout range"},
		{"timed_out", "integer", always, "the same as censored"},
		{"censored", "integer", always, "trials cut at --max-time and counted there"},
		{"no_leader", "integer", always, "trials that never had the leader the measurement starts from; left out of every statistic"},
		{"measured", "integer", always, "trials in the statistics: trials - no_leader"},
		{"split_vote_rate", "number", always, "the fraction of election terms that ended without a leader (table: split)"},
		{"mean_terms", "number", always, "the mean number of terms from the crash to the winning term (table: terms)"},
		{"messages_per_election", "number or null", always, "the mean number of messages from the crash to the end of the measurement (table: msgs); null (table: -) with --engine hashicorp, which does not count messages"},
		{"analytic_split_vote_rate", "number", optional, "splitvote: the thesis' closed form"},
		{"paper", "array", optional, "paper: the paper's figures beside the simulated ones ({stat, relation, ms, sim_ms}): those its text quotes (relation \"~\" or \">\"), then p10, p50, p90 and p99 of the measured trials behind the figure (relation \"figure\")"},
		{"percentiles_exact", "boolean", always, "false beyond 131072 trials, where percentiles come from a histogram"},
		{"percentile_rel_error", "number", always, "the histogram's relative error bound (0 when exact)"},
		{"cdf", "array", optional, "with --cdf: the CDF as [ms, fraction] pairs"},
		{"tick_ms", "number", optional, "ticks: the tick timers count in (0: exact timers)"},
		{"stable_windows", "integer", optional, "ticks: stable windows that finished"},
		{"node_hours", "number", optional, "ticks: simulated server-hours of the stable windows"},
		{"elections", "integer", optional, "ticks: election rounds in the stable windows, all unnecessary"},
		{"elections_per_node_hour", "number", optional, "ticks: elections per server-hour"},
		{"elections_per_node_hour_low", "number", optional, "ticks: its exact 95% Poisson interval, low end"},
		{"elections_per_node_hour_high", "number or null", optional, "ticks: high end; null when unbounded"},
	}, stats)},
	{"tune-candidate", "tune", "one per candidate timeout range", concat([]fieldSpec{
		{"label", "string", always, "the timeout range"},
		{"timeout_min_ms", "number", always, "the range's low end"},
		{"timeout_max_ms", "number", always, "the range's high end"},
		{"spread", "number", always, "(max - min) / min"},
		{"objective", "string", always, "the statistic minimized (--objective)"},
		{"objective_ms", "number", always, "its value"},
		{"objective_ci95_low_ms", "number", always, "its 95% confidence interval, low end"},
		{"objective_ci95_high_ms", "number or null", always, "high end; null when unbounded"},
		{"failover_trials", "integer", always, "failover trials that finished"},
		{"failover_censored", "integer", always, "of those, cut at --max-time"},
		{"failover_no_leader", "integer", always, "of those, without the first leader"},
		{"stable_trials", "integer", always, "stable windows that finished"},
		{"unsettled", "integer", always, "windows that never settled on a leader"},
		{"node_hours", "number", always, "simulated server-hours of the stable windows"},
		{"elections", "integer", always, "election rounds in the stable windows"},
		{"prevotes", "integer", always, "pre-vote rounds in the stable windows"},
		{"leader_changes", "integer", always, "leader changes in the stable windows"},
		{"elections_per_node_hour", "number", always, "elections per server-hour"},
		{"prevotes_per_node_hour", "number", always, "pre-vote rounds per server-hour"},
		{"leader_changes_per_hour", "number", always, "leader changes per cluster-hour"},
		{"unnecessary_per_node_hour", "number", always, "the constrained rate (elections, plus pre-votes with --count-prevotes)"},
		{"unnecessary_ci95_low", "number", always, "its exact 95% Poisson interval, low end"},
		{"unnecessary_ci95_high", "number or null", always, "high end; null when unbounded"},
		{"max_elections_per_node_hour", "number", always, "the bound (--max-elections)"},
		{"count_prevotes", "boolean", always, "--count-prevotes"},
		{"stable_for_s", "number", always, "length of a stable window in seconds"},
		{"status", "string", always, "feasible, infeasible, uncertain, unsettled or partial"},
		{"complete", "boolean", always, "all the candidate's trials finished"},
		{"feasible", "boolean", always, "status is feasible"},
		{"best", "boolean", always, "the recommended candidate (never in an interrupted run)"},
		{"runner_up", "boolean", always, "the runner-up (never in an interrupted run)"},
	}, stats)},
	{"tune-verdict", "tune", "one, last; none when interrupted", []fieldSpec{
		{"objective", "string", always, "the statistic minimized"},
		{"max_elections_per_node_hour", "number", always, "the bound"},
		{"best", "string or null", always, "the recommended range; null if none is feasible"},
		{"runner_up", "string or null", always, "the runner-up range, or null"},
		{"runner_up_margin_ms", "number or null", always, "runner-up's objective minus the best's"},
		{"refinement_rounds", "integer", always, "refinement rounds that ran"},
		{"decided", "boolean", always, "the decision is stable"},
		{"undecided", "string", always, "what the trials cannot tell apart, in words; empty when decided"},
		{"candidates", "integer", always, "candidates searched"},
	}},
	{"partition", "partition", "one per table row", []fieldSpec{
		{"shape", "string", always, "the partition shape"},
		{"setup", "string", always, "the model in words"},
		{"prevote", "boolean", always, "pre-vote on"},
		{"checkquorum", "boolean", always, "check-quorum on"},
		{"hours", "number", always, "cluster-hours simulated"},
		{"unsettled", "integer", always, "windows that never settled on a leader"},
		{"elections", "integer", always, "election rounds"},
		{"prevotes", "integer", always, "pre-vote rounds"},
		{"leader_changes", "integer", always, "leader changes"},
		{"elections_per_hour", "number", always, "per cluster-hour"},
		{"prevotes_per_hour", "number", always, "per cluster-hour"},
		{"leader_changes_per_hour", "number", always, "per cluster-hour"},
		{"leaderless_s_per_hour", "number", always, "seconds per hour in which no leader reached a majority"},
	}},
	{"multiraft", "multiraft", "one", []fieldSpec{
		{"crashed", "integer", unlessStopped, "the node that crashed"},
		{"affected", "integer", unlessStopped, "groups it led"},
		{"recovered", "integer", unlessStopped, "of those, groups with a new leader by the end"},
		{"p50_ms", "number", unlessStopped, "recovery time, median over the affected groups"},
		{"p99_ms", "number", unlessStopped, "recovery time, 99th percentile"},
		{"max_ms", "number", unlessStopped, "recovery time, longest"},
		{"unaffected_new_leaders", "integer", unlessStopped, "elections in groups it did not lead (should be 0)"},
		{"liveness_wakes", "integer", unlessStopped, "groups woken by node liveness"},
		{"before", "object", unlessStopped, "rates per second before the crash: messages, batches, timer_events, deliveries"},
		{"after", "object", unlessStopped, "the same after the crash"},
		{"awake_before", "integer", unlessStopped, "awake replicas before the crash"},
		{"virtual_ms", "number", unlessStopped, "virtual time simulated"},
	}},
}

func concat(a, b []fieldSpec) []fieldSpec { return append(append([]fieldSpec(nil), a...), b...) }

// writeRecordsHelp prints the schema.
func writeRecordsHelp(w io.Writer) {
	fmt.Fprint(w, `Every --json record is one JSON object on one line (JSON Lines); --csv has
the same fields as columns, one row per record, with one params.NAME column
per parameter. Durations are in milliseconds (names ending in _ms) unless a
name says otherwise. A field marked "opt" is left out of JSON when it does
not apply (an empty CSV cell); "run" marks a field left out when the run was
interrupted.

Every record:
`)
	writeFields(w, envelope)
	for _, r := range recordSpecs {
		fmt.Fprintf(w, "\n%q records (%s): %s\n", r.kind, r.from, r.doc)
		writeFields(w, r.fields)
	}
}

func writeFields(w io.Writer, fs []fieldSpec) {
	for _, f := range fs {
		typ := f.typ + map[presence]string{always: "", optional: ", opt", unlessStopped: ", run"}[f.when]
		fmt.Fprintf(w, "  %-27s %s\n", f.name, typ)
		fmt.Fprintf(w, "      %s\n", wrapText(f.doc, 72, 6))
	}
}

// recordsHelp is the help topic "raftsim help records".
func (a *app) recordsHelp() *cobra.Command {
	var b strings.Builder
	writeRecordsHelp(&b)
	return &cobra.Command{
		Use:   "records",
		Short: "The fields of the --json and --csv records of every subcommand",
		Long:  strings.TrimRight(b.String(), "\n"),
	}
}
