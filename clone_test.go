package raftick_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeCloneCommands returns the commands the README gives to use the
// module from a clone: the indented lines from "git clone" to
// "go mod tidy".
func readmeCloneCommands(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "    ")
		if strings.HasPrefix(line, "git clone ") || len(cmds) > 0 {
			cmds = append(cmds, line)
			if line == "go mod tidy" {
				return cmds
			}
		}
	}
	t.Fatal(`README.md gives no commands from "git clone" to "go mod tidy"`)
	return nil
}

// TestUseFromAClone runs the README's instructions for using raftick
// from a clone in a new module in a temporary directory, and builds and
// runs a program that imports raftick's packages; then the same with a
// go.work instead of the replace directive. It uses the environment's
// module proxy, as the README's commands do: with an empty module cache
// `go mod tidy` needs modules (other platforms' dependencies, go.mod
// files of the graph) that `go test ./...` never downloads, so an
// offline run (GOPROXY=off) failed on a fresh machine.
func TestUseFromAClone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module with the go command")
	}
	repo, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCloneCommands(t)
	const prog = `package main

import (
	"fmt"
	"time"

	"github.com/raftick/raftick/election"
	"github.com/raftick/raftick/wheel"
)

func main() {
	v, err := wheel.NewVirtual(wheel.DefaultConfig())
	if err != nil {
		panic(err)
	}
	defer v.Stop()
	cfg := election.DefaultConfig()
	cfg.ID, cfg.Voters, cfg.ElectionTimeout = 1, []election.ID{1}, 150*time.Millisecond
	fmt.Println("valid:", cfg.Validate() == nil)
}
`
	for _, mode := range []string{"replace", "work"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			run := func(args ...string) string {
				t.Helper()
				cmd := exec.Command(args[0], args[1:]...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GOSUMDB=off", "GOWORK=off", "GOFLAGS=-mod=mod")
				if mode == "work" { // the workspace's go.work, which allows no -mod=mod
					cmd.Env = append(os.Environ(), "GOSUMDB=off", "GOWORK="+filepath.Join(dir, "go.work"), "GOFLAGS=")
				}
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
				}
				return string(out)
			}
			run("go", "mod", "init", "example.com/user")
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(prog), 0o644); err != nil {
				t.Fatal(err)
			}
			if mode == "work" {
				run("go", "work", "init", ".", repo) // the README's "go work init . ../raftick"
			} else {
				for _, c := range cmds {
					if strings.HasPrefix(c, "git clone ") {
						continue // this checkout is the clone
					}
					run(strings.Fields(strings.ReplaceAll(c, "../raftick", repo))...)
				}
			}
			if got := run("go", "run", "."); got != "valid: true\n" {
				t.Fatalf("the program printed %q", got)
			}
		})
	}
}
