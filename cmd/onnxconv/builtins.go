package main

// The built-in plugins of onnxconv. Each runs out of process, served by
// `onnxconv __plugin serve NAME` (see plugin.go and plugins/README.md).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/exporters/adapt"
	"github.com/onnxconv/onnxconv/exporters/profiles"
	onnximp "github.com/onnxconv/onnxconv/importers/onnx"
	"github.com/onnxconv/onnxconv/importers/tflite"
	"github.com/onnxconv/onnxconv/importers/xgboost"
	"github.com/onnxconv/onnxconv/plugins"
	"github.com/onnxconv/onnxconv/plugins/sdk"
)

// builtinVersion is the version the built-in plugins report.
const builtinVersion = "builtin"

// exportPlugin is the name of the built-in ONNX exporter.
const exportPlugin = "onnx-export"

// builtinPlugins returns the built-in plugins by name.
func builtinPlugins() map[string]func() sdk.Plugin {
	return map[string]func() sdk.Plugin{
		onnximp.Name: func() sdk.Plugin { return sdk.Plugin{Importer: onnximp.Importer(builtinVersion)} },
		"xgboost":    func() sdk.Plugin { return sdk.Plugin{Importer: xgboostImporter()} },
		"tflite":     func() sdk.Plugin { return sdk.Plugin{Importer: tfliteImporter()} },
		exportPlugin: func() sdk.Plugin { return sdk.Plugin{Exporter: onnxExporter()} },
	}
}

func xgboostImporter() *sdk.Importer {
	d := xgboost.Describe()
	magic := make([]sdk.Magic, len(d.Magic))
	for i, b := range d.Magic {
		magic[i] = sdk.Magic{Bytes: b}
	}
	return &sdk.Importer{
		Name: d.Name, Version: builtinVersion, Format: d.Name, Description: d.Summary,
		Extensions: d.Extensions, Magic: magic,
		Detect: func(path string, head []byte) (bool, float32) {
			if xgboost.Detect(head, path) {
				return true, 1
			}
			return false, 0
		},
		Import: func(_ context.Context, data []byte, opts map[string]string) (*onnxpb.ModelProto, error) {
			o, err := xgboostOptions(opts)
			if err != nil {
				return nil, err
			}
			return xgboost.Import(data, o)
		},
	}
}

// xgboostOptions reads the xgboost importer options: ml_opset, opset and
// output (predict or margin).
func xgboostOptions(m map[string]string) (xgboost.Options, error) {
	var o xgboost.Options
	for k, v := range m {
		var err error
		switch k {
		case "ml_opset":
			o.MLOpset, err = strconv.Atoi(v)
		case "opset":
			o.AIOpset, err = strconv.Atoi(v)
		case "output":
			o.Output = v
		default:
			return o, fmt.Errorf("xgboost: unknown option %q (known: ml_opset, opset, output)", k)
		}
		if err != nil {
			return o, fmt.Errorf("xgboost: option %s=%q: %w", k, v, err)
		}
	}
	return o, nil
}

func tfliteImporter() *sdk.Importer {
	d := tflite.Describe()
	magic := make([]sdk.Magic, len(d.Magic))
	for i, m := range d.Magic {
		magic[i] = sdk.Magic{Offset: m.Offset, Bytes: m.Bytes}
	}
	return &sdk.Importer{
		Name: d.Name, Version: builtinVersion, Format: d.Name, Description: d.Summary,
		Extensions: d.Extensions, Magic: magic,
		Detect: func(path string, head []byte) (bool, float32) {
			if tflite.Detect(head, path) {
				return true, 1
			}
			return false, 0
		},
		Import: func(_ context.Context, data []byte, opts map[string]string) (*onnxpb.ModelProto, error) {
			o, err := tflite.ParseOptions(opts)
			if err != nil {
				return nil, err
			}
			return tflite.Import(data, o)
		},
	}
}

// onnxExporter fits an ONNX model to a target profile with exporters/adapt
// and writes it. Every rewrite and note of the adaptation becomes a
// warning; a model the target cannot run is an error listing the
// violations. Options: opset, ml_opset (force the target opsets) and
// allow_violations (write anyway).
func onnxExporter() *sdk.Exporter {
	names, err := profiles.Names()
	if err != nil || len(names) == 0 {
		// Without profiles the exporter still validates; Export reports
		// the cause.
		names = []string{"onnxruntime"}
	}
	return &sdk.Exporter{
		Name: exportPlugin, Version: builtinVersion,
		Description: "ONNX for a target runtime: opset, operators and IR version fitted to the target profile (exporters/adapt)",
		Targets:     names,
		ExportFile:  exportONNX,
	}
}

func exportONNX(ctx context.Context, inPath, outPath, target string, opts map[string]string) error {
	var o adapt.Options
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := opts[k]
		var err error
		switch k {
		case "opset":
			o.Opset, err = strconv.Atoi(v)
		case "ml_opset":
			o.MLOpset, err = strconv.Atoi(v)
		case "allow_violations":
			o.AllowViolations, err = strconv.ParseBool(v)
		default:
			return fmt.Errorf("%s: unknown option %q (known: opset, ml_opset, allow_violations)", exportPlugin, k)
		}
		if err != nil {
			return fmt.Errorf("%s: option %s=%q: %w", exportPlugin, k, v, err)
		}
	}
	p, err := profiles.Get(target)
	if err != nil {
		return fmt.Errorf("%s: %w", exportPlugin, err)
	}
	m, err := canonical.Load(inPath, canonical.LoadOptions{})
	if err != nil {
		return fmt.Errorf("%s: %w", exportPlugin, err)
	}
	defer m.Close()
	r, err := adapt.Adapt(m, p, o)
	if r != nil {
		for _, a := range r.Actions {
			sdk.Warn(ctx, "%s", a)
		}
		for _, n := range r.Notes {
			sdk.Warn(ctx, "note: %s", n)
		}
		for _, v := range r.Violations {
			if v.Warning {
				sdk.Warn(ctx, "%s", v)
			}
		}
	}
	if err != nil {
		var ue *adapt.UnsupportedError
		if !errors.As(err, &ue) || !o.AllowViolations || r == nil || !r.Converted {
			return fmt.Errorf("target %s: %w", p.Name, err)
		}
		for _, v := range ue.Violations {
			sdk.Warn(ctx, "%s", v)
		}
	}
	if r.ExternalData {
		return fmt.Errorf("%s for target %s: the adapted model exceeds the 2 GiB protobuf limit; the %s plugin writes one file (use `onnxconv opset` and `convert --external-data`)",
			inPath, p.Name, exportPlugin)
	}
	sdk.Warn(ctx, "target %s: opset %d -> %d, IR %d -> %d%s", p.Name, r.FromOpset, r.ToOpset, r.FromIRVersion, r.ToIRVersion, mlNote(r))
	if err := canonical.Save(outPath, m, canonical.SaveOptions{}); err != nil {
		return fmt.Errorf("%s for target %s: %w", inPath, p.Name, err)
	}
	return nil
}

func mlNote(r *adapt.Report) string {
	if r.FromMLOpset == 0 && r.ToMLOpset == 0 {
		return ""
	}
	return fmt.Sprintf(", ai.onnx.ml %d -> %d", r.FromMLOpset, r.ToMLOpset)
}

// newFormatsCmd returns `onnxconv formats [--json]`: the formats convert
// reads, from the built-in and third-party importer plugins.
func newFormatsCmd(builtins map[string]func() sdk.Plugin) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "formats",
		Short: "List the model formats convert reads (importer plugins)",
		Long: `List the formats convert reads: one line per importer plugin, built-in or
third-party (see 'onnxconv plugins'), with the extensions and whether it
recognizes files by magic bytes. Detection tries magic bytes first, then
the extension; --from FORMAT names the format instead.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			infos, err := plugins.Discover(cmd.Context(), pluginHostOptions(builtins))
			if err != nil {
				return badInput(fmt.Errorf("listing formats: %w", err))
			}
			type format struct {
				Format      string   `json:"format"`
				Plugin      string   `json:"plugin"`
				Extensions  []string `json:"extensions"`
				Magic       bool     `json:"magic"`
				Description string   `json:"description,omitempty"`
			}
			list := []format{}
			for _, p := range infos {
				if p.Err != nil || p.Importer == nil {
					continue
				}
				list = append(list, format{Format: p.Importer.Format, Plugin: p.Name, Extensions: append([]string{}, p.Importer.Extensions...),
					Magic: len(p.Importer.Magic) > 0, Description: p.Importer.Description})
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "FORMAT\tPLUGIN\tEXTENSIONS\tMAGIC\tDESCRIPTION")
			for _, f := range list {
				magic := "no"
				if f.Magic {
					magic = "yes"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Format, f.Plugin, orDash(strings.Join(f.Extensions, " ")), magic, f.Description)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
