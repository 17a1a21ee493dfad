// Package plot draws the CDFs of experiment results as PDF, SVG or PNG
// figures ready for a report (a short title, a caption line, decade
// ticks with labelled minor ticks, embedded fonts), laid out like Figure
// 16 of the Raft paper. Its one job is figures; it is the only package
// of the simulator that imports gonum/plot, so programs that use the
// engine, the experiments or the text reports never compile it.
package plot
