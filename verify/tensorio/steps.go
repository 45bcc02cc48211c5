package tensorio

import (
	"fmt"
	"path/filepath"

	"github.com/onnxconv/onnxconv/canonical"
)

// ReadDecodeSteps reads the stored steps of a decoder's run, as the
// fixtures of fixtures/decoders hold them (their make.py, with torch):
// dir/step0 … dir/stepN, each with input_ids.npy (the prompt, then one
// token a step) and logits.npy (the framework's logits of that step).
func ReadDecodeSteps(dir string, steps int) (ids, logits []*canonical.Tensor, err error) {
	for step := 0; step <= steps; step++ {
		d := filepath.Join(dir, fmt.Sprintf("step%d", step))
		id, err := ReadNpyFile(filepath.Join(d, "input_ids.npy"))
		if err != nil {
			return nil, nil, err
		}
		l, err := ReadNpyFile(filepath.Join(d, "logits.npy"))
		if err != nil {
			return nil, nil, err
		}
		ids, logits = append(ids, id), append(logits, l)
	}
	return ids, logits, nil
}
