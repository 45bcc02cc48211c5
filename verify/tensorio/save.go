package tensorio

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/onnxconv/onnxconv/canonical"
)

// SaveSamples writes input samples to dir so that LoadSamples reads them
// back: one sample as NAME.pb files (TensorProto, named after each tensor),
// several as test_data_set_N folders of them. dir is created; existing
// files of the same names are replaced, atomically each.
func SaveSamples(dir string, samples [][]*canonical.Tensor) error {
	for k, s := range samples {
		d := dir
		if len(samples) > 1 {
			d = filepath.Join(dir, "test_data_set_"+strconv.Itoa(k))
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("saving samples: %w", err)
		}
		for i, t := range s {
			if t == nil {
				continue
			}
			if t.Name == "" {
				return fmt.Errorf("saving samples: tensor %d of sample %d has no name", i, k)
			}
			if err := canonical.WriteTensorFile(filepath.Join(d, SafeName(t.Name)+".pb"), t); err != nil {
				return fmt.Errorf("saving samples: %w", err)
			}
		}
	}
	return nil
}
