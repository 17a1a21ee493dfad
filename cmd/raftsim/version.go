package main

import (
	"runtime/debug"
	"strings"
)

// version returns raftsim's version: the module version it was built at
// (go install ...@v1.2.3), else the VCS revision it was built from (with
// "+dirty" for uncommitted changes), else "devel".
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return "devel"
	}
	return "devel-" + rev[:min(len(rev), 12)] + dirty
}

// versionLine is what --version prints.
func versionLine() string {
	bi, ok := debug.ReadBuildInfo()
	goVersion := ""
	if ok {
		goVersion = " (" + strings.TrimSpace(bi.GoVersion) + ")"
	}
	return "raftsim " + version() + goVersion
}
