package raftick_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDesignNamesTestsThatExist: every test and benchmark that
// docs/design.md names (in backquotes; a name ending in "..." is a
// prefix) is declared in a _test.go file of the module, so that a
// promise never points at a test that was renamed or removed.
func TestDesignNamesTestsThatExist(t *testing.T) {
	design, err := os.ReadFile("docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	var decls strings.Builder
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			decls.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	code := decls.String()
	names := regexp.MustCompile("`((?:Test|Benchmark)[A-Za-z0-9_]*)(\\.\\.\\.)?[^`]*`").FindAllStringSubmatch(string(design), -1)
	if len(names) == 0 {
		t.Fatal("docs/design.md names no test")
	}
	for _, m := range names {
		decl := "func " + m[1]
		if m[2] == "" {
			decl += "("
		}
		if !strings.Contains(code, decl) {
			t.Errorf("docs/design.md names %s, which no _test.go file declares", m[0])
		}
	}
}
