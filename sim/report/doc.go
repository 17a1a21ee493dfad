// Package report renders the simulator's results: text tables, JSON
// Lines, JSON arrays and CSV of experiment.Results, the paper comparison,
// and tune's table, verdict, JSON and CSV. Its one job is output; it runs
// nothing. Figures are in sim/report/plot, the only package of the
// simulator that imports a plotting library.
package report
