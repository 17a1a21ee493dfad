package report

import (
	"io"

	"github.com/raftick/raftick/sim/experiment"
)

// SchemaVersion is the version of the record schema of the JSON Lines
// and CSV this package writes, in every record's "schema" field. It
// rises when a field changes its name or meaning or goes away; new fields
// do not raise it.
const SchemaVersion = 1

// A Record is one self-describing output object of a command whose
// results are not experiment.Results (raftsim's partition and multiraft):
// the fields every record starts with (see Meta.NewRecord), then the
// command's own, added in order.
type Record struct{ r record }

// NewRecord starts a record of the given kind with the fields every
// record has: record, schema, tool, version, command, model, interrupted,
// seed, trials (what ran) and trials_requested.
func (m Meta) NewRecord(kind string, seed uint64, trials, requested int) *Record {
	rec := &Record{}
	m.head(&rec.r, kind)
	rec.r.add("seed", seed)
	rec.r.add("trials", trials)
	rec.r.add("trials_requested", requested)
	return rec
}

// Add appends a field; a value is written as encoding/json writes it.
func (r *Record) Add(name string, value any) { r.r.add(name, value) }

// AddParams appends the "params" object: one member per parameter, in
// order (one CSV column each, "params.NAME").
func (r *Record) AddParams(ps []experiment.Param) { r.r.add("params", paramList(ps)) }

// WriteJSON writes the record as one JSON object on one line.
func (r *Record) WriteJSON(w io.Writer) error { return r.r.writeJSON(w) }

// CSVHeader returns the record's column names, CSVRow its cells.
func (r *Record) CSVHeader() []string { return r.r.csvHeader() }

// CSVRow returns the record's cells, in the order of CSVHeader.
func (r *Record) CSVRow() []string { return r.r.csvRow() }
