package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxtext"
)

// progressMin is the file size from which a progress bar is drawn.
const progressMin = 100 << 20

// newConvertCmd returns `onnxconv convert IN OUT`: for now ONNX to ONNX,
// binary (.onnx) or text (.onnxtxt) chosen by extension, optionally moving
// tensors to an external data file.
func newConvertCmd() *cobra.Command {
	var (
		external  bool
		threshold int64
		extFile   string
	)
	cmd := &cobra.Command{
		Use:   "convert IN OUT",
		Short: "Convert a model (for now ONNX to ONNX: binary .onnx or text .onnxtxt)",
		Long: `Read IN and write OUT, each in binary protobuf (.onnx) or ONNX text
syntax (.onnxtxt), chosen by extension. OUT is written atomically.

With --external-data, every tensor of at least --external-threshold bytes is
moved to one data file beside OUT (OUT's name + ".data" unless
--external-file is given), aligned to 4096 bytes. Without it, external data
of IN is inlined. A model whose protobuf would exceed 2 GiB is refused:
pass --external-data.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, out := args[0], args[1]
			stderr := cmd.ErrOrStderr()
			m, err := loadModel(in, stderr)
			if err != nil {
				return err
			}
			defer m.Close()
			if err := saveModel(out, m, canonical.SaveOptions{
				ExternalData:      external,
				ExternalThreshold: threshold,
				ExternalFile:      extFile,
			}, stderr); err != nil {
				return err
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&external, "external-data", false, "move tensors to an external data file beside OUT")
	cmd.Flags().Int64Var(&threshold, "external-threshold", canonical.DefaultExternalThreshold, "size in bytes from which a tensor moves to external data")
	cmd.Flags().StringVar(&extFile, "external-file", "", "name of the external data file, relative to OUT's folder (default OUT's name + \".data\")")
	return cmd
}

// isText reports whether path names an ONNX text syntax file.
func isText(path string) bool {
	return strings.EqualFold(filepath.Ext(path), ".onnxtxt")
}

// bar returns a progress callback drawing on stderr when it is a terminal
// and size is big enough, and a function to finish it.
func bar(stderr io.Writer, size int64, what string) (func(done, total int64), func()) {
	f, ok := stderr.(*os.File)
	if !ok || size < progressMin || !term.IsTerminal(int(f.Fd())) {
		return nil, func() {}
	}
	pb := progressbar.NewOptions64(size,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(true),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
	)
	return func(done, total int64) {
			if total != pb.GetMax64() {
				pb.ChangeMax64(total)
			}
			_ = pb.Set64(done)
		}, func() {
			_ = pb.Finish()
		}
}

// loadModel reads a binary or text model; an unreadable file is a
// bad-input error (exit 2).
func loadModel(path string, stderr io.Writer) (*canonical.Model, error) {
	return loadModelOpts(path, stderr, canonical.LoadOptions{})
}

// loadModelOpts is loadModel with load options (opts.Progress is set here).
func loadModelOpts(path string, stderr io.Writer, opts canonical.LoadOptions) (*canonical.Model, error) {
	if isText(path) {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, badInput(fmt.Errorf("cannot read the model: %w", err))
		}
		mp, err := onnxtext.Parse(path, src)
		if err != nil {
			return nil, badInput(fmt.Errorf("%w; fix the text or re-export it", err))
		}
		dir, err := filepath.Abs(filepath.Dir(path))
		if err != nil {
			return nil, badInput(fmt.Errorf("%s: %w", path, err))
		}
		m, err := canonical.FromProto(mp, dir)
		if err != nil {
			return nil, badInput(fmt.Errorf("%s: %w", path, err))
		}
		return m, nil
	}
	var size int64
	if st, err := os.Stat(path); err == nil {
		size = st.Size()
	}
	progress, done := bar(stderr, size, "reading")
	opts.Progress = progress
	m, err := canonical.Load(path, opts)
	done()
	if err != nil {
		return nil, badInput(fmt.Errorf("%w; the file is not a readable ONNX model (re-export it, or check that its external data files are beside it)", err))
	}
	return m, nil
}

// saveModel writes m as binary or text by OUT's extension.
func saveModel(path string, m *canonical.Model, opts canonical.SaveOptions, stderr io.Writer) error {
	if isText(path) {
		if opts.ExternalData {
			return badInput(fmt.Errorf("%s: the text syntax cannot reference external data; write a .onnx file for --external-data", path))
		}
		mp, err := m.ToProtoInline()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		src, err := onnxtext.Format(mp)
		if err != nil {
			return fmt.Errorf("%s: cannot write the model as text: %w; write a .onnx file instead", path, err)
		}
		return canonical.WriteFileAtomic(path, func(w io.Writer) error {
			_, err := w.Write(src)
			return err
		})
	}
	var size int64
	if g := m.Graph; g != nil {
		for _, v := range g.Initializers {
			if b, err := v.Const.ByteSize(); err == nil {
				size += b
			}
		}
	}
	progress, done := bar(stderr, size, "writing")
	opts.Progress = progress
	err := canonical.Save(path, m, opts)
	done()
	return err
}
