package sklearn

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/formats/formatinfo"
	"github.com/onnxconv/onnxconv/importers"
)

// Name is the importer and format name.
const Name = "sklearn"

// MaxFileSize bounds the files Import reads.
const MaxFileSize = 2 << 30

// New returns the scikit-learn importer.
func New() importers.Importer { return importer{} }

type importer struct{}

// Describe names the format: pickle (.pkl, .pickle) and joblib files.
func (importer) Describe() importers.Description {
	return importers.Description{
		Name:       Name,
		Format:     Name,
		Summary:    "scikit-learn estimator, pickle protocol 0-5, joblib (zlib, gzip, bz2, xz, lzma, lz4) or skops (protocols 0-2), read as data: nothing in the file is executed",
		Extensions: []string{".pkl", ".pickle", ".joblib", ".sav", ".skops"},
		Magic: []importers.Magic{
			{Bytes: []byte{0x80, 0x02}}, {Bytes: []byte{0x80, 0x03}}, {Bytes: []byte{0x80, 0x04}}, {Bytes: []byte{0x80, 0x05}},
			// protocols 0 and 1: an estimator's copyreg._reconstructor
			// (Detect checks the opcodes)
			{Bytes: []byte("ccopy_reg\n_reconstructor\n")}, {Bytes: []byte("ccopyreg\n_reconstructor\n")},
		},
	}
}

// Detect is 1 for a pickle whose head names a scikit-learn module (also
// inside a zlib, gzip, xz, lzma or lz4 joblib stream, or a bz2, xz, lzma
// or lz4 stream too long to peek into with a pickle or joblib extension),
// 0.6 for any other pickle or joblib stream (0.5 for bz2, xz and lz4,
// 0.3 for lzma, whose magic is weak), 1 for a zip named .skops (skops; other zips are other
// formats' files, Keras's among them), 0.3
// for an old (ZF) joblib file with a pickle extension (refused with a
// clear message by Import), else 0.
func (importer) Detect(path string, head []byte) float32 {
	c := sniff(head)
	switch c {
	case "":
		if isZip(head) && formatinfo.MatchExtension(path, []string{".skops"}) {
			return 1
		}
		return 0
	case Pickle:
		if strings.Contains(string(head), "sklearn") {
			return 1
		}
		return 0.6
	case JoblibBz2:
		// A bz2 block cannot be decompressed from a head: trust the
		// block magic and the extension.
		if len(head) >= 10 && string(head[4:10]) == "1AY&SY" {
			if formatinfo.MatchExtension(path, []string{".pkl", ".pickle", ".joblib", ".sav", ".bz2"}) {
				return 1
			}
			return 0.5
		}
		return 0
	case JoblibZ, JoblibGz, JoblibXz, JoblibLZ, JoblibLz4:
		inner := peekDecompressed(head)
		if sniff(inner) != Pickle {
			if c == JoblibZ || c == JoblibGz || len(inner) > 0 {
				// A joblib name: claimed weakly, so that Import says
				// what the stream holds instead of "no importer".
				if len(inner) > 0 && formatinfo.MatchExtension(path, []string{".pkl", ".pickle", ".joblib", ".sav"}) {
					return 0.3
				}
				return 0
			}
			// The xz, lzma and lz4 decoders give nothing before a whole
			// block (or dictionary) is decoded: trust the magic and the
			// extension.
			if formatinfo.MatchExtension(path, []string{".pkl", ".pickle", ".joblib", ".sav", ".xz", ".lzma", ".lz4"}) {
				return 1
			}
			if c == JoblibLZ {
				return 0.3
			}
			return 0.5
		}
		if strings.Contains(string(inner), "sklearn") {
			return 1
		}
		return 0.6
	}
	if formatinfo.MatchExtension(path, []string{".pkl", ".pickle", ".joblib", ".sav"}) {
		return 0.3
	}
	return 0
}

// peekDecompressed decompresses what it can of a compressed head.
func peekDecompressed(head []byte) []byte {
	data := append([]byte(nil), head...)
	r, err := openStream(data)
	if err != nil {
		return nil
	}
	buf := make([]byte, importers.HeadSize)
	n, _ := io.ReadFull(r, buf)
	return buf[:n]
}

// Import reads the file at path (at most MaxFileSize bytes) and converts
// it. It takes no options.
func (importer) Import(ctx context.Context, path string, opts importers.Options) (*importers.Result, error) {
	if err := checkOptions(opts); err != nil {
		return nil, err
	}
	return importers.ImportBytes(ctx, path, MaxFileSize, Name, func(data []byte) (*canonical.Model, error) {
		return Import(data)
	})
}

// checkOptions refuses every option: the importer takes none.
func checkOptions(opts importers.Options) error {
	_, err := importers.OptionSet[struct{}]{Name: Name}.Parse(opts)
	return err
}

// Source parses the file at path for direct computation in Go.
func (importer) Source(ctx context.Context, path string, opts importers.Options) (importers.Source, error) {
	if err := checkOptions(opts); err != nil {
		return nil, err
	}
	data, err := importers.ReadFile(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("%s import: %w", Name, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &source{m: m}, nil
}

type source struct{ m *Model }

func (s *source) Describe() string {
	return "scikit-learn " + s.m.Class + ", direct Go predictor over the unpickled attributes"
}

func (s *source) Run(ctx context.Context, inputs []*canonical.Tensor) ([]*canonical.Tensor, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("sklearn source: %d inputs, want 1 (%s)", len(inputs), InputName)
	}
	return s.m.run(inputs[0])
}

func (s *source) Close() error { return nil }

// Run computes the model on x for a caller holding a Model.
func (m *Model) Run(x *canonical.Tensor) ([]*canonical.Tensor, error) { return m.run(x) }

var _ importers.Predictor = importer{}
