package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: Module, Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"},
			{Key: "vcs.time", Value: "2026-11-23T10:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	i := fromBuildInfo(bi)
	if i.Version != "(devel)" || i.Revision != "0123456789abcdef0123" || !i.Modified {
		t.Fatalf("got %+v", i)
	}
	if got, want := i.Short(), "(devel) 0123456789ab+dirty"; got != want {
		t.Errorf("Short() = %q, want %q", got, want)
	}
	if s := i.String(); !strings.Contains(s, "revision 0123456789abcdef0123 (modified)") {
		t.Errorf("String() = %q", s)
	}

	// onnxconv as a dependency of another program.
	bi = &debug.BuildInfo{Main: debug.Module{Path: "example.com/tool"},
		Deps: []*debug.Module{{Path: Module, Version: "v0.4.1"}}}
	if i := fromBuildInfo(bi); i.Version != "v0.4.1" {
		t.Errorf("as a dependency: version %q, want v0.4.1", i.Version)
	}
}

func TestGetIsNeverEmpty(t *testing.T) {
	if v := Get().Version; v == "" {
		t.Fatal("empty version")
	}
}
