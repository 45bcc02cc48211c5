package canonical

import (
	"encoding/json"
	"fmt"
)

// MetaSourceTensors is the metadata_props key under which an importer
// (package importers)
// records, for the values of the model it made, the source tensor each
// one holds (JSON: value name -> SourceTensor). Being in the model, it
// stays with a file converted earlier; the error map follows it to ask
// the source's runtime for the same tensor (runtimes: intermediate
// values of a TF.js graph model).
const MetaSourceTensors = "onnxconv.source_tensors"

// SourceTensor is the source tensor an ONNX value holds.
type SourceTensor struct {
	// Tensor is the source's name ("conv2d/Conv2D", "node:1").
	Tensor string `json:"tensor"`
	// Op is the source op that computes it.
	Op string `json:"op,omitempty"`
	// Perm, when set, is the permutation that takes the ONNX value to
	// the source's layout (channels moved last: [0 2 3 1]), as
	// importers.SourceLayout's.
	Perm []int `json:"perm,omitempty"`
}

// SetSourceTensors records s in m's metadata (replacing an earlier
// record); an empty s records nothing.
func SetSourceTensors(m *Model, s map[string]SourceTensor) error {
	kept := m.MetadataProps[:0]
	for _, p := range m.MetadataProps {
		if p.Key != MetaSourceTensors {
			kept = append(kept, p)
		}
	}
	m.MetadataProps = kept
	if len(s) == 0 {
		return nil
	}
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("recording the source tensors: %w", err)
	}
	m.MetadataProps = append(m.MetadataProps, StringPair{Key: MetaSourceTensors, Value: string(data)})
	return nil
}

// SourceTensors returns the source tensors recorded in m (nil when none).
func SourceTensors(m *Model) (map[string]SourceTensor, error) {
	for _, p := range m.MetadataProps {
		if p.Key != MetaSourceTensors {
			continue
		}
		var s map[string]SourceTensor
		if err := json.Unmarshal([]byte(p.Value), &s); err != nil {
			return nil, fmt.Errorf("metadata %s: %w", MetaSourceTensors, err)
		}
		return s, nil
	}
	return nil, nil
}
