// Package report renders the simulator's results: text tables, JSON
// Lines and CSV of experiment.Results (self-describing records: Meta
// says what wrote them, and each carries the seed, every model parameter,
// the trial and censored counts and the statistics that are only lower
// bounds), the paper comparison, and tune's table with its confidence
// intervals, verdict, JSON Lines and CSV. Its one job is output; it runs
// nothing. Figures are in sim/report/plot, the only package of the
// simulator that imports a plotting library.
package report
