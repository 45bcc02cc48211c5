package builtinenv

import (
	"context"
	"slices"
	"testing"

	"github.com/onnxconv/onnxconv/exporters"
	expbuiltin "github.com/onnxconv/onnxconv/exporters/builtin"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/importers/builtin"
	onnximp "github.com/onnxconv/onnxconv/importers/onnx"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/plugins/sdk"
	"github.com/onnxconv/onnxconv/plugins/sdk/importersdk"
	rtbuiltin "github.com/onnxconv/onnxconv/runtimes/builtin"
)

func importerNames(imps []importers.Importer) []string {
	var out []string
	for _, imp := range imps {
		out = append(out, imp.Describe().Name)
	}
	return out
}

func exporterNames(exps []exporters.Exporter) []string {
	var out []string
	for _, e := range exps {
		out = append(out, e.Describe().Name)
	}
	return out
}

// New holds every built-in importer, exporter and runtime, in process.
func TestNew(t *testing.T) {
	env := New()
	if got, want := importerNames(env.Importers.All()), importerNames(builtin.Importers()); !slices.Equal(got, want) {
		t.Errorf("importers %v, want %v", got, want)
	}
	if got, want := exporterNames(env.Exporters.All()), exporterNames(expbuiltin.Exporters()); !slices.Equal(got, want) {
		t.Errorf("exporters %v, want %v", got, want)
	}
	var want []string
	for _, r := range rtbuiltin.Runtimes() {
		want = append(want, r.Info().Name)
	}
	if got := env.Runtimes.Names(); !slices.Equal(got, want) || len(got) == 0 {
		t.Errorf("runtimes %v, want %v", got, want)
	}
	if env.Runtimes.Host() != nil {
		t.Error("New has a plugin host")
	}
	for _, imp := range env.Importers.All() {
		if _, ok := imp.(interface{ Plugin() plugins.PluginInfo }); ok {
			t.Errorf("importer %s is served by a plugin in New", imp.Describe().Name)
		}
	}
}

// Hosted serves every built-in importer but ONNX's through its plugin on
// the host (described without starting it), ONNX's in process, and the
// host's runtime plugins.
func TestHosted(t *testing.T) {
	served := map[string]func() sdk.Plugin{}
	for _, imp := range builtin.Importers() {
		served[imp.Describe().Name] = func() sdk.Plugin { return sdk.Plugin{Importer: importersdk.From(imp, "test")} }
	}
	opts := plugins.BuiltinOptions(served, []string{"__plugin", "serve"})
	opts.NoThirdParty = true
	h, err := plugins.NewHost(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	env, err := Hosted(h)
	if err != nil {
		t.Fatal(err)
	}
	got, want := importerNames(env.Importers.All()), importerNames(builtin.Importers())
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("importers %v, want %v", got, want)
	}
	for _, imp := range env.Importers.All() {
		name := imp.Describe().Name
		_, viaPlugin := imp.(interface{ Plugin() plugins.PluginInfo })
		if viaPlugin == (name == onnximp.Name) {
			t.Errorf("importer %s: served by its plugin %v, want %v", name, viaPlugin, name != onnximp.Name)
		}
	}
	if env.Runtimes.Host() != h {
		t.Error("the runtimes are not the host's")
	}
	if env.Exporters == nil {
		t.Error("no exporters")
	}
}
