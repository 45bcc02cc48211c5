package runtimes

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/internal/testpaths"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/plugins/protocol"
	"github.com/onnxconv/onnxconv/plugins/sdk"
	"github.com/onnxconv/onnxconv/verify"
)

// The test binary doubles as a runtime plugin, "fake": started by a plugin
// host (which sets the magic cookie), it serves a runtime that returns its
// inputs as outputs.
func TestMain(m *testing.M) {
	if os.Getenv(protocol.EnvMagicCookie) == protocol.MagicCookie {
		sdk.ServeRuntime(sdk.Runtime{
			Name:        "fake",
			Version:     "9.8.7",
			Description: "echo runtime for tests",
			Run: func(_ context.Context, _ string, in []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
				return in, nil
			},
		})
		return
	}
	os.Exit(testpaths.Main(m, "runtimes"))
}

// fakePluginDir returns a folder holding the test binary as the plugin
// onnxconv-plugin-fake.
func fakePluginDir(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(dir, plugins.ExecutablePrefix+"fake")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// hostSet returns the runtimes of a plugin host made with opts.
func hostSet(t *testing.T, opts plugins.Options) *Set {
	t.Helper()
	h, err := plugins.NewHost(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return NewSet(h)
}

// mlp loads the mlp_opset17 fixture.
func mlp(t *testing.T) (string, *canonical.Model) {
	t.Helper()
	p := filepath.Join("..", "fixtures", "models", "mlp_opset17", "model.onnx")
	m, err := canonical.Load(p, canonical.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p, m
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{"", nil, ""},
		{"  ", nil, ""},
		{"onnxruntime", []string{"onnxruntime"}, ""},
		{" onnxruntime , executor ", []string{"onnxruntime", "executor"}, ""},
		{"a,b,c", nil, "give one runtime, or two"},
		{"a,", nil, "empty runtime name"},
	} {
		got, err := Parse(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q) error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestSetupExecutorOnly: the executor needs no plugin host: an empty,
// third-party-free plugin setup still works.
func TestSetupExecutorOnly(t *testing.T) {
	path, m := mlp(t)
	for _, names := range [][]string{nil, {Executor}, {Executor, Executor}} {
		s, err := NewSetup(names, 0, nil)
		if err != nil {
			t.Fatalf("%q: %v", names, err)
		}
		a, err := s.Side(0, path, m)
		if err != nil || a.Runner != nil || a.Model != m {
			t.Fatalf("%q: side A %+v, %v", names, a, err)
		}
		want := path
		if names != nil {
			want = path + " (executor)"
		}
		if a.Name != want {
			t.Errorf("%q: side name %q, want %q", names, a.Name, want)
		}
		if d := s.Describe(a); d != "A ran on the built-in executor, B on the built-in executor" {
			t.Errorf("%q: Describe = %q", names, d)
		}
		if d := s.Describe(&verify.Side{Name: "stored"}); d != "A ran on the built-in executor; B is stored outputs" {
			t.Errorf("%q: Describe(stored) = %q", names, d)
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}
	if _, err := NewSetup([]string{Executor}, -1, nil); err == nil {
		t.Error("negative threads accepted")
	}
	if _, err := NewSetup([]string{"a", "b", "c"}, 0, nil); err == nil {
		t.Error("three runtimes accepted")
	}
}

// TestSetupMissing: a runtime no plugin serves is a *MissingError that
// lists the folders searched and says how to install the plugin.
func TestSetupMissing(t *testing.T) {
	p1, p2, user := t.TempDir(), t.TempDir(), t.TempDir()
	opts := plugins.Options{PluginPath: p1 + string(os.PathListSeparator) + p2, UserDir: user}

	_, err := NewSetup([]string{ONNXRuntime, Executor}, 0, hostSet(t, opts))
	var me *MissingError
	if !errors.As(err, &me) {
		t.Fatalf("err = %#v, want a *MissingError", err)
	}
	if me.Runtime != ONNXRuntime || !reflect.DeepEqual(me.Searched, []string{p1, p2, user}) {
		t.Errorf("MissingError %+v", me)
	}
	if !errors.Is(err, plugins.ErrNotFound) {
		t.Errorf("errors.Is(err, plugins.ErrNotFound) = false for %v", err)
	}
	for _, want := range []string{
		"runtime onnxruntime: the ONNX Runtime plugin is not installed (looked in " + p1 + ", " + p2 + ", " + user + ")",
		"go build -o " + user + "/onnxconv-plugin-onnxruntime ./cmd/onnxconv-plugin-onnxruntime",
		"npm install --ignore-scripts onnxruntime-node@1.30.0",
		"libonnxruntime.so.1 " + user + "/",
		"ONNXRUNTIME_LIB",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message lacks %q:\n%v", want, err)
		}
	}

	_, err = NewSetup([]string{"tvm"}, 0, hostSet(t, opts))
	if !errors.As(err, &me) || me.Runtime != "tvm" || !strings.Contains(err.Error(), "no plugin serves this runtime") ||
		!strings.Contains(err.Error(), "onnxconv-plugin-tvm") {
		t.Errorf("unknown runtime: %v", err)
	}

	// The user plugins folder is shown as a person types it.
	home := t.TempDir()
	t.Setenv("HOME", home)
	opts = plugins.Options{PluginPath: p1, UserDir: filepath.Join(home, ".config", "onnxconv", "plugins")}
	_, err = NewSetup([]string{ONNXRuntime}, 0, hostSet(t, opts))
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "go build -o ~/.config/onnxconv/plugins/onnxconv-plugin-onnxruntime ") {
		t.Errorf("home-relative hint: %v", err)
	}
}

// TestSetupPlugin: a runtime served by a plugin takes its side with a
// runner that calls the plugin, and Describe names its version, path and
// description.
func TestSetupPlugin(t *testing.T) {
	ctx := context.Background()
	dir := fakePluginDir(t)
	s, err := NewSetup([]string{"fake", Executor}, 1, hostSet(t, plugins.Options{PluginPath: dir, UserDir: t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	path, m := mlp(t)
	a, err := s.Side(0, path, m)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := a.Runner.(*Runner)
	if !ok || r.Runtime() != "fake" || a.Name != path+" (fake)" {
		t.Fatalf("side A %+v", a)
	}
	b, err := s.Side(1, path, m)
	if err != nil || b.Runner != nil || b.Name != path+" (executor)" {
		t.Fatalf("side B %+v, %v", b, err)
	}
	want := "A ran on fake 9.8.7 (plugin " + filepath.Join(dir, "onnxconv-plugin-fake") + ": echo runtime for tests), B on the built-in executor"
	if d := s.Describe(b); d != want {
		t.Errorf("Describe = %q\nwant       %q", d, want)
	}

	// The runner runs the model file on the plugin (which echoes).
	ins := verify.GraphInputs(m)
	if len(ins) != 1 {
		t.Fatalf("mlp has %d inputs", len(ins))
	}
	n := int64(1)
	dims := []int64{4, 16}
	for _, d := range dims {
		n *= d
	}
	raw := make([]byte, 4*n)
	for i := range raw {
		raw[i] = byte(i)
	}
	in := canonical.NewTensor("x", canonical.Float, dims, raw)
	outs, err := a.Runner.Run(ctx, []*canonical.Tensor{in})
	if err != nil {
		t.Fatal(err)
	}
	got, err := outs[0].Bytes()
	if err != nil || len(outs) != 1 || !bytes.Equal(got, raw) || outs[0].Name != ins[0].Name {
		t.Errorf("runner outputs %d, %q, err %v", len(outs), outs[0].Name, err)
	}

	if _, err := s.Side(2, path, m); err == nil {
		t.Error("side 2 accepted")
	}
}
