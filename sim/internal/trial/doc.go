// Package trial holds the rules of a failover or bootstrap trial that
// the experiments and their engines share: the default time limit of a
// trial and how many survivors may have short logs.
package trial
