package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The documents a user reads, relative to the module root.
var userDocs = []string{"README.md", "CHANGELOG.md", "sim/README.md", "docs/*.md"}

// docFiles returns the paths of userDocs, and the module root.
func docFiles(t *testing.T) (root string, files []string) {
	t.Helper()
	root = filepath.Join("..", "..")
	for _, g := range userDocs {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil || len(m) == 0 {
			t.Fatalf("no document %s", g)
		}
		files = append(files, m...)
	}
	return root, files
}

// codeLines returns the code a document shows: the lines of its fenced
// and indented blocks (a line ending in a backslash joined to the next)
// and its inline `code` spans, each with its line number.
func codeLines(text string) (code []string, lineOf []int) {
	inline := regexp.MustCompile("`([^`]+)`")
	fenced := false
	var cont string
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		trim := strings.TrimSpace(l)
		if strings.HasPrefix(trim, "```") {
			fenced = !fenced
			continue
		}
		if fenced || strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "\t") {
			if strings.HasSuffix(trim, "\\") {
				cont += strings.TrimSuffix(trim, "\\") + " "
				continue
			}
			code, lineOf = append(code, cont+trim), append(lineOf, i+1)
			cont = ""
			continue
		}
		for _, m := range inline.FindAllStringSubmatch(l, -1) {
			code, lineOf = append(code, m[1]), append(lineOf, i+1)
		}
	}
	return code, lineOf
}

// raftsimCommands returns the raftsim command lines in code: the words
// after a word "raftsim" (or a path ending in /raftsim; not the value of
// another command's flag) up to a redirection, a pipe or a quote's end.
// Each comes with whether it is a command for sure: code that starts
// with it, or whose first word is followed by a flag (otherwise
// "raftsim that wrote the record" in a text block is prose).
func raftsimCommands(code string) (out [][]string, sure []bool) {
	words := strings.Fields(code)
	for i, w := range words {
		w = strings.Trim(w, `'"(`)
		if w != "raftsim" && !strings.HasSuffix(w, "/raftsim") || i > 0 && strings.HasPrefix(words[i-1], "-") {
			continue
		}
		var cmd []string
		for _, a := range words[i+1:] {
			if a == ">" || a == "|" || a == "'>'" || a == "&&" || a == ";" || strings.HasPrefix(a, ">") {
				break
			}
			end := strings.HasSuffix(a, "'") || strings.HasSuffix(a, `"`)
			cmd = append(cmd, strings.Trim(a, `'"`))
			if end {
				break
			}
		}
		out = append(out, cmd)
		sure = append(sure, i == 0 || len(cmd) > 1 && strings.HasPrefix(cmd[1], "-") || len(cmd) > 0 && strings.HasPrefix(cmd[0], "-"))
	}
	return out, sure
}

// TestDocsNameWhatExists: every raftsim command line the documents show
// names a subcommand and flags that exist (cobra's command tree), the
// README's list of subcommands is the command's, and every identifier of
// this module's packages they name in code (`election.Config.Emulate`,
// `wheel.Shared()`) is declared (go/parser), so that a renamed or
// removed flag, subcommand or identifier fails here, not for a user.
func TestDocsNameWhatExists(t *testing.T) {
	a := &app{}
	rootCmd := a.rootCmd()
	root, files := docFiles(t)
	pkgs := modulePackages(t, root)
	flagWord := regexp.MustCompile(`^--?([a-z][a-z0-9-]*)(=.*)?$`)
	ident := regexp.MustCompile(`(^|[^\w./-])([a-z][a-z0-9]*)\.([A-Z]\w*)(\.([A-Z]\w*))?`)
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		code, lineOf := codeLines(string(b))
		for i, c := range code {
			where := rel + ":" + itoa(lineOf[i])
			cmds, sure := raftsimCommands(c)
			for j, args := range cmds {
				if len(args) > 0 && strings.HasPrefix(args[0], "<") {
					continue // a placeholder: "raftsim <experiment> ..."
				}
				if len(args) > 0 && strings.Contains(args[0], "|") { // "failover|bootstrap|sweep"
					for _, sub := range strings.Split(args[0], "|") {
						checkCommandLine(t, rootCmd, append([]string{sub}, args[1:]...), flagWord, where, true)
					}
					continue
				}
				checkCommandLine(t, rootCmd, args, flagWord, where, sure[j])
			}
			for _, m := range ident.FindAllStringSubmatch(c, -1) {
				p, ok := pkgs[m[2]]
				if !ok {
					continue
				}
				name := m[3]
				if m[5] != "" {
					name += "." + m[5]
				}
				if !p.has(name) {
					t.Errorf("%s: `%s.%s` is not declared in package %s (%s)", where, m[2], name, m[2], p.dir)
				}
			}
		}
	}
	// The README lists the subcommands.
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(b), "the subcommands are")
	if i < 0 {
		t.Fatal(`README.md does not say "the subcommands are"`)
	}
	list := string(b[i:])
	list = list[:strings.Index(list, ")")]
	var listed, real []string
	for _, m := range regexp.MustCompile("`([a-z]+)`").FindAllStringSubmatch(list, -1) {
		listed = append(listed, m[1])
	}
	for _, c := range rootCmd.Commands() {
		if c.IsAvailableCommand() && c.Name() != "help" && c.Name() != "completion" {
			real = append(real, c.Name())
		}
	}
	slices.Sort(listed)
	slices.Sort(real)
	if !slices.Equal(listed, real) {
		t.Errorf("README.md lists the subcommands %v; raftsim has %v", listed, real)
	}
}

// checkCommandLine checks that args (what follows "raftsim") name a
// subcommand of root and flags it has.
func checkCommandLine(t *testing.T, root *cobra.Command, args []string, flagWord *regexp.Regexp, where string, sure bool) {
	t.Helper()
	if len(args) > 0 && regexp.MustCompile(`^[a-z]+$`).MatchString(args[0]) && args[0] != "help" {
		if sub, _, err := root.Find(args[:1]); (err != nil || sub == root) && !sure {
			return // prose that mentions raftsim
		}
	}
	cmd := root
	for _, a := range args {
		if strings.HasPrefix(a, "-") || !regexp.MustCompile(`^[a-z]+$`).MatchString(a) {
			break
		}
		if a == "help" && cmd == root {
			continue
		}
		sub, _, err := cmd.Find([]string{a})
		if err != nil || sub == cmd {
			if cmd == root && len(args) > 0 && args[0] == a {
				t.Errorf("%s: raftsim %s: no subcommand %q", where, strings.Join(args, " "), a)
			}
			break
		}
		cmd = sub
		if a == args[0] {
			break // one level of subcommands
		}
	}
	for _, a := range args {
		m := flagWord.FindStringSubmatch(a)
		if m == nil {
			continue
		}
		if f := lookupFlag(cmd, m[1]); f == nil {
			t.Errorf("%s: raftsim %s: %s has no flag --%s", where, strings.Join(args, " "), cmd.CommandPath(), m[1])
		}
	}
}

// lookupFlag finds a flag of cmd by name or shorthand, inherited ones
// and help and version included.
func lookupFlag(cmd *cobra.Command, name string) *pflag.Flag {
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	if f := cmd.Flags().Lookup(name); f != nil {
		return f
	}
	if f := cmd.InheritedFlags().Lookup(name); f != nil {
		return f
	}
	if len(name) == 1 {
		return cmd.Flags().ShorthandLookup(name)
	}
	return nil
}

// pkgDecls are the declared names of a package: top-level identifiers,
// and "T.M" for the methods and fields of its types (fields of embedded
// types of the package included).
type pkgDecls struct {
	dir   string
	names map[string]bool
	embed map[string][]string // type -> its embedded types of the package
}

func (p *pkgDecls) has(name string) bool {
	if p.names[name] {
		return true
	}
	typ, sel, ok := strings.Cut(name, ".")
	if !ok {
		return false
	}
	for _, e := range p.embed[typ] {
		if p.has(e + "." + sel) {
			return true
		}
	}
	return false
}

// modulePackages parses the non-test Go files of every package of the
// module under root, by package name (the first found for a name).
func modulePackages(t *testing.T, root string) map[string]*pkgDecls {
	t.Helper()
	pkgs := map[string]*pkgDecls{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		name := f.Name.Name
		if name == "main" {
			return nil
		}
		p := pkgs[name]
		if p == nil {
			p = &pkgDecls{dir: filepath.Dir(path), names: map[string]bool{}, embed: map[string][]string{}}
			pkgs[name] = p
		} else if p.dir != filepath.Dir(path) {
			return nil
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					p.names[d.Name.Name] = true
					continue
				}
				typ := d.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				if ix, ok := typ.(*ast.IndexExpr); ok {
					typ = ix.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					p.names[id.Name+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							p.names[n.Name] = true
						}
					case *ast.TypeSpec:
						p.names[s.Name.Name] = true
						collectMembers(p, s.Name.Name, s.Type)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// collectMembers records the fields (struct) or methods (interface) of
// type typ.
func collectMembers(p *pkgDecls, typ string, x ast.Expr) {
	var fields *ast.FieldList
	switch v := x.(type) {
	case *ast.StructType:
		fields = v.Fields
	case *ast.InterfaceType:
		fields = v.Methods
	default:
		return
	}
	for _, f := range fields.List {
		for _, n := range f.Names {
			p.names[typ+"."+n.Name] = true
		}
		if len(f.Names) == 0 { // embedded
			e := f.Type
			if s, ok := e.(*ast.StarExpr); ok {
				e = s.X
			}
			switch v := e.(type) {
			case *ast.Ident:
				p.names[typ+"."+v.Name] = true
				p.embed[typ] = append(p.embed[typ], v.Name)
			case *ast.SelectorExpr:
				p.names[typ+"."+v.Sel.Name] = true
			}
		}
	}
}
