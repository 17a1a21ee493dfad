package raftick_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// lockNames maps the names the code's lock-order comments give a lock
// to the names docs/design.md gives it.
var lockNames = map[string]string{
	"Host.mu":               "multiraft.Host",
	"election.Node's lock":  "election.Node",
	"Node":                  "election.Node",
	"repeated.Timer's lock": "repeated.Timer",
	"the Wheel's":           "wheel.Wheel",
	"mu":                    "wheel.Wheel", // in wheel.go
	"outMu":                 "the Host's outbox lock",
	"outbox.mu":             "a peer's outbox",
	"pmu":                   "the Host's persister queue",
	"fxMu":                  "the Host's effects queue",
}

// lockChains returns the chains "a -> b -> c" of lines, each lock named
// by lockNames where it has a name there (a parenthesis and what follows
// a ';' are comments).
func lockChains(lines []string) [][]string {
	paren := regexp.MustCompile(`\([^)]*\)`)
	var chains [][]string
	for _, l := range lines {
		l, _, _ = strings.Cut(l, ";")
		l = paren.ReplaceAllString(l, "")
		if !strings.Contains(l, "->") {
			continue
		}
		var chain []string
		for _, part := range strings.Split(l, "->") {
			name := strings.TrimSpace(part)
			if n, ok := lockNames[name]; ok {
				name = n
			}
			chain = append(chain, name)
		}
		chains = append(chains, chain)
	}
	return chains
}

// TestDesignLockOrder: the lock order of docs/design.md ("## Lock order")
// is the one written where the locks are declared, on multiraft.Host and
// at wheel.Wheel's mutex: every lock design.md names is in the code's
// order, and every pair it orders, the code orders the same way (and
// never the other way).
func TestDesignLockOrder(t *testing.T) {
	design, err := os.ReadFile("docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(design), "## Lock order\n")
	if !ok {
		t.Fatal(`docs/design.md has no "## Lock order" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var indented []string
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "    ") {
			indented = append(indented, l)
		}
	}
	want := lockChains(indented)
	if len(want) == 0 {
		t.Fatal("docs/design.md's lock order lists no chain (indented a -> b lines)")
	}

	host, err := os.ReadFile("multiraft/host.go")
	if err != nil {
		t.Fatal(err)
	}
	var code []string
	for _, l := range strings.Split(string(host), "\n") {
		if strings.HasPrefix(l, "//\t") {
			code = append(code, strings.TrimPrefix(l, "//\t"))
		}
	}
	got := lockChains(code)
	w, err := os.ReadFile("wheel/wheel.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Lock order: a (repeated\.Timer's lock), then (mu), then (napMu)`).FindStringSubmatch(string(w))
	if m == nil {
		t.Fatal("wheel/wheel.go no longer states the wheel's lock order at its mutex")
	}
	got = append(got, lockChains([]string{strings.Join(m[1:], " -> ")})...)

	// before[a][b]: the code takes a before b, directly or through others.
	before := map[string]map[string]bool{}
	add := func(a, b string) {
		if before[a] == nil {
			before[a] = map[string]bool{}
		}
		before[a][b] = true
	}
	for _, c := range got {
		for i := range c {
			for j := i + 1; j < len(c); j++ {
				add(c[i], c[j])
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for a, bs := range before {
			for b := range bs {
				for c := range before[b] {
					if !before[a][c] {
						add(a, c)
						changed = true
					}
				}
			}
		}
	}
	for _, c := range want {
		for i := range c {
			for j := i + 1; j < len(c); j++ {
				if !before[c[i]][c[j]] {
					t.Errorf("docs/design.md takes %s before %s; the code's lock order (multiraft/host.go, wheel/wheel.go) does not", c[i], c[j])
				}
				if before[c[j]][c[i]] {
					t.Errorf("the code takes %s before %s, against docs/design.md", c[j], c[i])
				}
			}
		}
	}
}

// TestWheelDocNamesItsFiles: docs/wheel.md's table of files names every
// source file of package wheel, and no file that is gone.
func TestWheelDocNamesItsFiles(t *testing.T) {
	doc, err := os.ReadFile("docs/wheel.md")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z_]+\\.go)`").FindAllStringSubmatch(string(doc), -1) {
		named[m[1]] = true
	}
	files, err := os.ReadDir("wheel")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range files {
		n := f.Name()
		if strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			have[n] = true
			if !named[n] {
				t.Errorf("docs/wheel.md does not name wheel/%s", n)
			}
		}
	}
	for n := range named {
		if !have[n] {
			t.Errorf("docs/wheel.md names wheel/%s, which does not exist", n)
		}
	}
}
