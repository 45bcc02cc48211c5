package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
	"github.com/onnxconv/onnxconv/formats/formatinfo"
	"github.com/onnxconv/onnxconv/options"
	"github.com/onnxconv/onnxconv/plugins/protocol"
)

// Importer is an importer served by a plugin. Set Import, or ImportFile for
// inputs too large to hold in memory.
type Importer struct {
	// Name identifies the plugin (lower case, e.g. "csvgraph").
	Name    string
	Version string
	// Format is the name of the format read; empty means Name.
	Format      string
	Description string
	// Extensions are file name suffixes with the dot, e.g. ".csvg".
	Extensions []string
	// Magic are byte patterns that identify the format.
	Magic []Magic

	// Detect, if set, decides whether the file at path, whose first bytes
	// (up to 4 KiB) are head, is in the format. Without it a file is
	// recognized by Magic (confidence 1) or else by Extensions (0.5).
	Detect func(path string, head []byte) (ok bool, confidence float32)

	// Import converts the whole input file to an ONNX model.
	Import func(ctx context.Context, in []byte, opts map[string]string) (*onnxpb.ModelProto, error)

	// ImportFile is the path-based form: it reads inPath and writes an ONNX
	// ModelProto file to outPath itself (see WriteFileAtomic). It is used
	// when set, instead of Import.
	ImportFile func(ctx context.Context, inPath, outPath string, opts map[string]string) error

	// Options lists the options Import takes (importers.OptionSet.Specs
	// gives them with their parser), for `onnxconv formats` and the host's
	// help; the host refuses an unknown key or a value that does not fit
	// its spec before starting the plugin, and the plugin parses them on
	// Import. None means the plugin decides alone.
	Options []options.Spec
	// Runtime names the reference runtime that computes files of the
	// format as their framework does ("tflite", "tfjs", "onnxruntime"), or
	// "" (see formatinfo.Description.Runtime).
	Runtime string
	// Source, if set, parses the file at path (with Import's options) for
	// direct computation, inside the plugin process: the host's
	// verification computes the source through it (importers.Predictor),
	// without parsing the file itself.
	Source func(ctx context.Context, path string, opts map[string]string) (formatinfo.Source, error)
}

func (imp *Importer) info() *protocol.ImporterInfo {
	format := imp.Format
	if format == "" {
		format = imp.Name
	}
	exts := make([]string, len(imp.Extensions))
	for i, e := range imp.Extensions {
		exts[i] = strings.ToLower(e)
	}
	return &protocol.ImporterInfo{
		Description: formatinfo.Description{
			Name:       imp.Name,
			Format:     format,
			Summary:    imp.Description,
			Extensions: exts,
			Magic:      imp.Magic,
			Options:    imp.Options,
			Runtime:    imp.Runtime,
		},
		Version:   imp.Version,
		Predictor: imp.Source != nil,
	}
}

func (imp *Importer) validate() error {
	if imp.Name == "" {
		return errors.New("importer has no Name")
	}
	if imp.Import == nil && imp.ImportFile == nil {
		return fmt.Errorf("importer %q has neither Import nor ImportFile", imp.Name)
	}
	for _, e := range imp.Extensions {
		if !strings.HasPrefix(e, ".") {
			return fmt.Errorf("importer %q: extension %q does not start with a dot", imp.Name, e)
		}
	}
	for _, m := range imp.Magic {
		if len(m.Bytes) == 0 || m.Offset < 0 {
			return fmt.Errorf("importer %q: magic pattern at offset %d is empty or negative", imp.Name, m.Offset)
		}
	}
	return nil
}

// MatchMagic reports whether head (the first bytes of a file) holds one of
// the patterns (formatinfo.MatchMagic).
func MatchMagic(head []byte, patterns []Magic) bool { return formatinfo.MatchMagic(head, patterns) }

// MatchExtension reports whether path ends with one of exts, ignoring case
// (formatinfo.MatchExtension).
func MatchExtension(path string, exts []string) bool { return formatinfo.MatchExtension(path, exts) }

// importerServer adapts an Importer to protocol.Importer. Stack traces of
// panics go to stderr.
type importerServer struct {
	imp    *Importer
	stderr io.Writer
	// src is the source opened by OpenSource: a plugin process serves one
	// source, started for it and ended by the host.
	mu  sync.Mutex
	src formatinfo.Source
}

func (s *importerServer) OpenSource(ctx context.Context, in string, opts map[string]string) (d string, err error) {
	if s.imp.Source == nil {
		return "", status.Error(codes.Unimplemented, "this importer does not compute its sources")
	}
	var src formatinfo.Source
	err = callRecover(s.stderr, "Source", func() error {
		var err error
		src, err = s.imp.Source(ctx, in, opts)
		if err == nil && src == nil {
			err = fmt.Errorf("importer %q returned no source and no error", s.imp.Name)
		}
		if err == nil {
			d = src.Describe()
		}
		return err
	})
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	old := s.src
	s.src = src
	s.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	return d, nil
}

func (s *importerServer) Predict(ctx context.Context, inputs []*onnxpb.TensorProto) (outs []*onnxpb.TensorProto, err error) {
	s.mu.Lock()
	src := s.src
	s.mu.Unlock()
	if src == nil {
		return nil, status.Error(codes.FailedPrecondition, "Predict before OpenSource")
	}
	in := make([]*canonical.Tensor, len(inputs))
	for i, tp := range inputs {
		if in[i], err = canonical.TensorFromProto(tp); err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
	}
	var got []*canonical.Tensor
	if err := callRecover(s.stderr, "Source.Run", func() error {
		var err error
		got, err = src.Run(ctx, in)
		return err
	}); err != nil {
		return nil, err
	}
	outs = make([]*onnxpb.TensorProto, len(got))
	for i, t := range got {
		if t == nil {
			return nil, fmt.Errorf("output %d is nil", i)
		}
		if outs[i], err = canonical.TensorToProto(t); err != nil {
			return nil, fmt.Errorf("output %d: %w", i, err)
		}
		outs[i].Name = proto.String(t.Name)
	}
	return outs, nil
}

func (s *importerServer) Describe(context.Context) (*protocol.ImporterInfo, error) {
	return s.imp.info(), nil
}

func (s *importerServer) Detect(_ context.Context, path string, head []byte) (ok bool, conf float32, err error) {
	defer recoverAsError(&err, s.stderr, "Detect")
	if s.imp.Detect != nil {
		ok, conf = s.imp.Detect(path, head)
		return ok, min(max(conf, 0), 1), nil
	}
	if MatchMagic(head, s.imp.Magic) {
		return true, 1, nil
	}
	if MatchExtension(path, s.imp.Extensions) {
		return true, 0.5, nil
	}
	return false, 0, nil
}

func (s *importerServer) Import(ctx context.Context, in, out string, opts map[string]string) (warns []string, err error) {
	ctx, w := withWarnings(ctx)
	if s.imp.ImportFile != nil {
		if err := callRecover(s.stderr, "ImportFile", func() error { return s.imp.ImportFile(ctx, in, out, opts) }); err != nil {
			return nil, err
		}
		return w.all(), nil
	}
	data, err := os.ReadFile(in)
	if err != nil {
		return nil, fmt.Errorf("reading input: %w", err)
	}
	var model *onnxpb.ModelProto
	err = callRecover(s.stderr, "Import", func() error {
		var err error
		model, err = s.imp.Import(ctx, data, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	if model == nil {
		return nil, fmt.Errorf("importer %q returned no model and no error", s.imp.Name)
	}
	data = nil // let the GC reclaim the input before marshaling
	buf, err := proto.MarshalOptions{Deterministic: true}.Marshal(model)
	if err != nil {
		return nil, fmt.Errorf("marshaling the model: %w", err)
	}
	if err := WriteFileAtomic(out, func(wr io.Writer) error {
		_, err := wr.Write(buf)
		return err
	}); err != nil {
		return nil, err
	}
	return w.all(), nil
}

// callRecover runs f and turns a panic in it into an error; the stack trace
// goes to stderr.
func callRecover(stderr io.Writer, fn string, f func() error) (err error) {
	defer recoverAsError(&err, stderr, fn)
	return f()
}

func recoverAsError(err *error, stderr io.Writer, fn string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("panic in %s: %v", fn, r)
		if stderr != nil {
			fmt.Fprintf(stderr, "panic in %s: %v\n%s\n", fn, r, debug.Stack())
		}
	}
}
