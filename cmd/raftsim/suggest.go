package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// unknownCommand is the usage error for name, a word where root expects
// a subcommand, with cobra's suggestions of the subcommands it is close
// to ("did you mean failover?").
func unknownCommand(root *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q", name)
	if s := root.SuggestionsFor(name); len(s) > 0 {
		msg += " (did you mean " + strings.Join(s, " or ") + "?)"
	} else {
		msg += " (see raftsim --help)"
	}
	return usageError{fmt.Errorf("%s", msg)}
}

// misspelledCommand returns unknownCommand's error if cobra parsed args
// as root's own (no subcommand matched) and a word of args is in a
// subcommand's place: then a flag error (e.g. "unknown flag: --timeout"
// for "raftsim faliover --timeout 150-300ms") is about the misspelled
// subcommand, not the flag.
func misspelledCommand(root, cmd *cobra.Command, args []string) error {
	if cmd != root {
		return nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return nil
		case strings.HasPrefix(a, "-"):
			// Skip the value of a root flag that takes one ("--shard 0/2").
			name := strings.TrimLeft(a, "-")
			if f := root.PersistentFlags().Lookup(name); f != nil && !strings.Contains(a, "=") && f.NoOptDefVal == "" {
				i++
			}
		default:
			return unknownCommand(root, a)
		}
	}
	return nil
}
