package plugins

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/onnxconv/onnxconv/options"
	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// ListEntry is one plugin as 'onnxconv plugins --json' lists it.
type ListEntry struct {
	Name     string                 `json:"name"`
	Kind     string                 `json:"kind"`
	Version  string                 `json:"version,omitempty"`
	Builtin  bool                   `json:"builtin"`
	Path     string                 `json:"path"`
	Importer *protocol.ImporterInfo `json:"importer,omitempty"`
	Exporter *protocol.ExporterInfo `json:"exporter,omitempty"`
	Error    string                 `json:"error,omitempty"`
}

// List returns the entries of infos (as Discover returns them) for JSON,
// in the same order; never nil.
func List(infos []PluginInfo) []ListEntry {
	out := make([]ListEntry, 0, len(infos))
	for _, p := range infos {
		j := ListEntry{Name: p.Name, Kind: p.Kind(), Version: p.Version(), Builtin: p.Builtin, Path: p.Path,
			Importer: p.Importer, Exporter: p.Exporter}
		if p.Err != nil {
			j.Error = p.Err.Error()
		}
		out = append(out, j)
	}
	return out
}

// WriteTable writes infos as 'onnxconv plugins' lists them: one row per
// plugin (name, kind, version, formats, path or "(built-in)"), then the
// reason of every broken plugin.
func WriteTable(w io.Writer, infos []PluginInfo) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tVERSION\tFORMATS\tPATH")
	for _, p := range infos {
		path := p.Path
		if p.Builtin {
			path = "(built-in)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, p.Kind(), orDash(p.Version()), orDash(shortFormats(p.Formats())), path)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range infos {
		if p.Err != nil {
			if _, err := fmt.Fprintf(w, "\n%s: %v\n", p.Name, p.Err); err != nil {
				return err
			}
		}
	}
	return nil
}

// Format is one format an importer plugin reads, as 'onnxconv formats'
// lists it.
type Format struct {
	Format      string   `json:"format"`
	Plugin      string   `json:"plugin"`
	Extensions  []string `json:"extensions"`
	Magic       bool     `json:"magic"`
	Description string   `json:"description,omitempty"`
	// Options are the importer's options (-O KEY=VALUE), as its
	// description gives them; Runtime its reference runtime.
	Options []options.Spec `json:"options,omitempty"`
	Runtime string         `json:"runtime,omitempty"`
}

// Formats returns the formats the working importer plugins of infos read,
// in the order of infos; never nil.
func Formats(infos []PluginInfo) []Format {
	list := []Format{}
	for _, p := range infos {
		if p.Err != nil || p.Importer == nil {
			continue
		}
		list = append(list, Format{Format: p.Importer.Format, Plugin: p.Name, Extensions: append([]string{}, p.Importer.Extensions...),
			Magic: len(p.Importer.Magic) > 0, Description: p.Importer.Summary, Options: p.Importer.Options, Runtime: p.Importer.Runtime})
	}
	return list
}

// WriteFormatTable writes formats as 'onnxconv formats' lists them.
func WriteFormatTable(w io.Writer, formats []Format) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FORMAT\tPLUGIN\tEXTENSIONS\tMAGIC\tDESCRIPTION")
	for _, f := range formats {
		magic := "no"
		if f.Magic {
			magic = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Format, f.Plugin, orDash(strings.Join(f.Extensions, " ")), magic, f.Description)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// shortFormats joins a plugin's formats for the table, summarising long
// lists of export targets (the full list is in the JSON and 'onnxconv
// targets').
func shortFormats(formats []string) string {
	var targets, other []string
	for _, f := range formats {
		if strings.HasPrefix(f, "→") {
			targets = append(targets, f)
		} else {
			other = append(other, f)
		}
	}
	if len(targets) > 4 {
		other = append(other, fmt.Sprintf("%s, %s … %s (%d targets: onnxconv targets)", targets[0], targets[1], targets[len(targets)-1], len(targets)))
	} else {
		other = append(other, targets...)
	}
	return strings.Join(other, "; ")
}
