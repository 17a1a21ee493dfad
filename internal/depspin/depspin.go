// Package depspin keeps module dependencies pinned while packages are written. Removed before release.
package depspin

import (
	_ "github.com/cockroachdb/datadriven"
	_ "github.com/hashicorp/go-hclog"
	_ "github.com/hashicorp/raft"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/spf13/cobra"
	_ "github.com/stretchr/testify/require"
	_ "go.uber.org/goleak"
	_ "gonum.org/v1/plot"
	_ "golang.org/x/term"
)
