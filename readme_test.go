package raftick_test

import (
	"bufio"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeMaxLines is the README's budget: what it is, how to start (from a
// clone until a release), the quick starts of the library with their
// imports, and the one current performance table (its headline rows);
// the package list, the simulator's Go API, methods, commands, full
// tables and everything else live in docs/ and the packages' docs.
const readmeMaxLines = 300

// TestREADMEBlocksAreExamples checks that the Go blocks of README.md are,
// in order, the bodies of the Example functions of example_test.go, each
// after the import declaration of the packages it uses, so that the
// README's code compiles, says where every package comes from (metrics is
// github.com/hashicorp/go-metrics) and its output is what go test saw.
func TestREADMEBlocksAreExamples(t *testing.T) {
	blocks, lines := readmeGoBlocks(t, "README.md")
	if lines > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move detail to docs/", lines, readmeMaxLines)
	}
	bodies := exampleBodies(t, "example_test.go")
	if len(blocks) != len(bodies) {
		t.Fatalf("README.md has %d Go blocks, example_test.go %d examples; keep them one to one, in order", len(blocks), len(bodies))
	}
	if *updateREADME {
		writeREADMEBlocks(t, "README.md", bodies)
		return
	}
	for i, b := range blocks {
		if b != bodies[i].text {
			t.Errorf("README.md's Go block %d is not the body of %s:\n--- README.md\n%s--- %s\n%s",
				i+1, bodies[i].name, b, bodies[i].name, bodies[i].text)
		}
	}
}

var updateREADME = flag.Bool("update-readme", false, "rewrite README.md's Go blocks from example_test.go")

// writeREADMEBlocks replaces the ```go blocks of the Markdown file at
// path, in order, with the texts of bodies.
func writeREADMEBlocks(t *testing.T, path string, bodies []exampleBody) {
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	i, in := 0, false
	for line := range strings.Lines(string(src)) {
		switch {
		case !in && strings.TrimSpace(line) == "```go":
			in = true
			out.WriteString(line)
			out.WriteString(bodies[i].text)
			i++
		case in && strings.TrimSpace(line) == "```":
			in = false
			out.WriteString(line)
		case !in:
			out.WriteString(line)
		}
	}
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestREADMEFreshMachineCommands checks that the two commands a new user
// runs first are in the README as written.
func TestREADMEFreshMachineCommands(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"go run ./cmd/raftsim paper", "go test ./...", "go mod tidy", "go install ./cmd/raftsim"} {
		if !strings.Contains(string(b), "    "+cmd+"\n") {
			t.Errorf("README.md lacks the command %q on a line of its own", cmd)
		}
	}
}

// readmeGoBlocks returns the contents of the ```go blocks of the Markdown
// file at path and its number of lines.
func readmeGoBlocks(t *testing.T, path string) (blocks []string, lines int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cur *strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines++
		line := sc.Text()
		switch {
		case cur == nil && strings.TrimSpace(line) == "```go":
			cur = new(strings.Builder)
		case cur != nil && strings.TrimSpace(line) == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s: a ```go block is not closed", path)
	}
	return blocks, lines
}

type exampleBody struct {
	name, text string
}

// exampleBodies returns the bodies of the Example functions of the Go file
// at path, in file order, each without its braces and one level of
// indentation.
func exampleBodies(t *testing.T, path string) []exampleBody {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var out []exampleBody
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || !strings.HasPrefix(fd.Name.Name, "Example") || fd.Body == nil {
			continue
		}
		lbrace := fset.Position(fd.Body.Lbrace).Offset
		rbrace := fset.Position(fd.Body.Rbrace).Offset
		inner := strings.TrimPrefix(string(src[lbrace+1:rbrace]), "\n")
		var b strings.Builder
		for line := range strings.Lines(inner) {
			b.WriteString(strings.TrimPrefix(line, "\t"))
		}
		out = append(out, exampleBody{fd.Name.Name, importsUsed(fset, f, b.String()) + "\n" + b.String()})
	}
	return out
}

// TestDocLinksResolve checks that every relative link of the README, the
// changelog, docs/ and sim/README.md names a file that exists.
func TestDocLinksResolve(t *testing.T) {
	files := []string{"README.md", "CHANGELOG.md", "sim/README.md"}
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, docs...)
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", f, target)
			}
		}
	}
}

// TestDesignListsEveryPackage checks that the package list of
// docs/design.md names every package of the module, by its path or by its
// name in the entry of its parent folder (internal/ lists its leaves), and
// that every folder it lists exists.
func TestDesignListsEveryPackage(t *testing.T) {
	b, err := os.ReadFile("docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## The packages\n\n```\n")
	if start < 0 {
		t.Fatal(`docs/design.md has no "## The packages" list`)
	}
	block := doc[start:]
	block = block[:strings.Index(block[len("## The packages\n\n```\n"):], "```")+len("## The packages\n\n```\n")]
	// entries maps a listed folder ("sim/engines/") to its text,
	// continuation lines included.
	entries := map[string]string{}
	last := ""
	for line := range strings.Lines(block) {
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(line, " ") && strings.HasSuffix(f[0], "/") {
			last = f[0]
		}
		if last != "" {
			entries[last] += line
		}
	}
	for dir := range entries {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Errorf("docs/design.md lists %s, which is not a folder of the module", dir)
		}
	}
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "docs") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
			return filepath.SkipDir // another module (bench/peers)
		}
		if path == "." || !hasGoCode(t, path) {
			return nil
		}
		p := filepath.ToSlash(path)
		if _, ok := entries[p+"/"]; ok {
			return nil
		}
		for dir := p; strings.Contains(dir, "/"); {
			dir = dir[:strings.LastIndex(dir, "/")]
			if text, ok := entries[dir+"/"]; ok && strings.Contains(text, name) {
				return nil
			}
		}
		t.Errorf("docs/design.md does not list the package %s", p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// hasGoCode reports whether the folder holds a non-test Go file.
func hasGoCode(t *testing.T, dir string) bool {
	t.Helper()
	fs, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		if strings.HasSuffix(f.Name(), ".go") && !strings.HasSuffix(f.Name(), "_test.go") {
			return true
		}
	}
	return false
}

// TestDocsCiteNoIssueNumbers: the README and docs/ are for readers who
// cannot look up the project's issue tracker; how a number came about
// belongs in the commit message that changed it.
func TestDocsCiteNoIssueNumbers(t *testing.T) {
	files := []string{"README.md", "CHANGELOG.md", "sim/README.md"}
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	issue := regexp.MustCompile(`(?i)\bissue #?\d+|#\d{2,}\b`)
	for _, f := range append(files, docs...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := issue.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q", f, i+1, m)
			}
		}
	}
}

// importsUsed returns the import declaration of the imports of f that
// body uses (a package named p is used if body mentions "p."), in f's
// order and groups (a blank line between groups).
func importsUsed(fset *token.FileSet, f *ast.File, body string) string {
	var b strings.Builder
	b.WriteString("import (\n")
	lastLine, wrote := 0, false
	for _, spec := range f.Imports {
		path := strings.Trim(spec.Path.Value, `"`)
		name := path[strings.LastIndex(path, "/")+1:]
		name = strings.TrimPrefix(name, "go-") // github.com/hashicorp/go-metrics is metrics
		if spec.Name != nil {
			name = spec.Name.Name
		}
		line := fset.Position(spec.Pos()).Line
		newGroup := lastLine != 0 && line > lastLine+1
		lastLine = line
		if !regexp.MustCompile(`(^|[^.\w])` + regexp.QuoteMeta(name) + `\.`).MatchString(body) {
			continue
		}
		if newGroup && wrote {
			b.WriteString("\n")
		}
		b.WriteString("\t" + spec.Path.Value + "\n")
		wrote = true
	}
	b.WriteString(")\n")
	return b.String()
}
