package tflite

import (
	"github.com/onnxconv/onnxconv/canonical"
	clayout "github.com/onnxconv/onnxconv/canonical/layout"
)

// sourceTensors says which TFLite tensor each node output of mp holds
// (canonical.MetaSourceTensors: the error map asks the TFLite interpreter
// for them): the value of every operator output in each layout it was
// made in, with the permutation back to TFLite's NHWC for the values made
// channels-first. A quantized tensor's value is the quantized one, so the
// map compares it in steps. Tensors whose name is empty or repeated
// cannot be asked for by name and are left out, as are values no node of
// mp computes (graph inputs, initializers).
func (c *converter) sourceTensors(mp *canonical.Model) map[string]canonical.SourceTensor {
	count := map[string]int{}
	for _, t := range c.g.tensors {
		count[t.name]++
	}
	out := map[string]canonical.SourceTensor{}
	for _, o := range c.g.ops {
		for _, idx := range o.outputs {
			if idx < 0 || int(idx) >= len(c.g.tensors) {
				continue
			}
			t := c.g.tensors[idx]
			if t.name == "" || count[t.name] > 1 {
				continue
			}
			for _, lay := range []layout{native, nchw} {
				name, ok := c.raw[layoutKey{int(idx), lay}]
				if !ok {
					continue
				}
				if v := mp.Graph.Lookup(name); v == nil {
					continue
				} else if p, _ := v.Producer(); p == nil {
					continue
				}
				if _, seen := out[name]; seen {
					continue
				}
				s := canonical.SourceTensor{Tensor: t.name, Op: opName(o)}
				if lay == nchw {
					s.Perm = clayout.ToLast(4)
				}
				out[name] = s
			}
		}
	}
	return out
}
