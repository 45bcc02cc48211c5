package canonical

import "strings"

// MetaRunOptionPrefix starts the metadata_props keys by which an importer
// tells the source's runtime how to run the source:
// "onnxconv.run.RUNTIME.NAME" is passed to the runtime plugin RUNTIME as
// its run option NAME (runtimes, plugins.RunOptions.Options). Being in
// the model, it crosses the plugin boundary with it.
const MetaRunOptionPrefix = "onnxconv.run."

// RunOptionKey is the metadata key of run option name for runtime.
func RunOptionKey(runtime, name string) string { return MetaRunOptionPrefix + runtime + "." + name }

// RunOptions returns the run options meta (a model's metadata_props as a
// map) holds for runtime, nil when none.
func RunOptions(meta map[string]string, runtime string) map[string]string {
	var out map[string]string
	prefix := MetaRunOptionPrefix + runtime + "."
	for k, v := range meta {
		if name, ok := strings.CutPrefix(k, prefix); ok && name != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[name] = v
		}
	}
	return out
}

// MetaStartState is the metadata_props key by which an importer names the
// graph inputs that carry state from one call to the next (comma
// separated), which the source keeps inside itself: the source starts
// each call from its state after a reset, which these inputs at zeros
// stand for. Verification feeds them zeros and never passes them to the
// source.
const MetaStartState = "onnxconv.start_state"

// StartState returns the names of m's state inputs (MetaStartState), nil
// when it has none.
func StartState(m *Model) map[string]bool {
	var out map[string]bool
	for _, p := range m.MetadataProps {
		if p.Key != MetaStartState || p.Value == "" {
			continue
		}
		for _, n := range strings.Split(p.Value, ",") {
			if n = strings.TrimSpace(n); n != "" {
				if out == nil {
					out = map[string]bool{}
				}
				out[n] = true
			}
		}
	}
	return out
}
