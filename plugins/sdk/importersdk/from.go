// Package importersdk is the plugin SDK of the importer role: it serves an
// importers.Importer out of process as an sdk.Importer. The SDK itself
// (plugins/sdk) speaks the protocol of every role and names no role's
// contract, so that an exporter or runtime plugin does not depend on the
// importers.
package importersdk

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/importers"
	"github.com/onnxconv/onnxconv/plugins/internal/scrub"
	"github.com/onnxconv/onnxconv/plugins/sdk"
)

// From serves an importers.Importer out of process: the plugin
// describes itself from imp.Describe (the whole description: options and
// reference runtime too), detects with imp.Detect, computes sources with
// imp.Source when imp is an importers.Predictor, and imports with
// imp.Import, writing the model to the host's output path with
// canonical.Save (atomically, external data inlined). The importer's
// warnings become the call's warnings. version is the version the plugin
// reports.
//
// A model over the 2 GiB protobuf limit cannot cross the plugin boundary
// as one file; such an import fails with canonical.ErrTooLarge (in
// process, use imp directly).
func From(imp importers.Importer, version string) *sdk.Importer {
	d := imp.Describe()
	var source func(ctx context.Context, path string, opts map[string]string) (importers.Source, error)
	if p, ok := imp.(importers.Predictor); ok {
		source = func(ctx context.Context, path string, opts map[string]string) (importers.Source, error) {
			return p.Source(ctx, path, importers.Options(opts))
		}
	}
	return &sdk.Importer{
		Name:        d.Name,
		Version:     version,
		Format:      d.FormatName(),
		Description: d.Summary,
		Extensions:  d.Extensions,
		Magic:       d.Magic,
		Options:     d.Options,
		Runtime:     d.Runtime,
		Source:      source,
		Detect: func(path string, head []byte) (bool, float32) {
			c := imp.Detect(path, head)
			return c > 0, c
		},
		ImportFile: func(ctx context.Context, inPath, outPath string, opts map[string]string) error {
			res, err := imp.Import(ctx, inPath, importers.Options(opts))
			if err != nil {
				return err
			}
			if res == nil || res.Model == nil {
				return fmt.Errorf("%s importer returned no model and no error for %s", d.Name, inPath)
			}
			defer res.Model.Close()
			for _, w := range res.Warnings {
				sdk.Warn(ctx, "%s", w)
			}
			if err := canonical.Save(outPath, res.Model, canonical.SaveOptions{}); err != nil {
				// The output (and Save's temporaries beside it) is the
				// host's temporary file: keep its path out of the message,
				// which reaches the user.
				tmp := filepath.Join(filepath.Dir(outPath), "."+filepath.Base(outPath))
				err = scrub.Error(err, "the output", outPath, tmp)
				return fmt.Errorf("%s: writing the imported model: %w", inPath, err)
			}
			return nil
		},
	}
}
