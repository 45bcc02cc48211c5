package pipeline

import (
	"errors"
	"io"
	"os"
	"strings"

	"github.com/onnxconv/onnxconv/importers"
)

// claimedByOther names the format of path when an importer of reg other
// than ONNX's is more confident of it than ONNX's own detection, before
// the file is parsed as ONNX (a TensorFlow GraphDef or a TFLite file can
// parse as an empty ModelProto; detecting first refuses it by its name).
// It is "" when reg is nil.
func claimedByOther(reg *importers.Registry, path string) string {
	if reg == nil {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	head := make([]byte, importers.HeadSize)
	n, err := io.ReadFull(f, head)
	f.Close()
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return ""
	}
	head = head[:n]
	var onnxConf, best float32
	format := ""
	for _, imp := range reg.All() {
		c := imp.Detect(path, head)
		name := imp.Describe().FormatName()
		if strings.EqualFold(name, "onnx") {
			onnxConf = c
			continue
		}
		if c > best {
			best, format = c, name
		}
	}
	if best >= 0.5 && best > onnxConf {
		return format
	}
	return ""
}
