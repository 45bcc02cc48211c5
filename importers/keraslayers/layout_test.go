package keraslayers

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
)

// Under LayoutNCHW an image input read by a Rescaling then a Conv2D is
// channels-first with no Transpose, as is the Conv2D's output; a sequence
// input read only by a Dense stays channels-last, as does the Dense's
// output; the metadata names the channels-first values.
func TestLayoutNCHW(t *testing.T) {
	cfg := `{"class_name": "Functional", "config": {"name": "f",
	 "layers": [
	  {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 8, 6, 3], "name": "img"}, "name": "img", "inbound_nodes": []},
	  {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 5, 4], "name": "seq"}, "name": "seq", "inbound_nodes": []},
	  {"class_name": "Rescaling", "config": {"name": "scale", "scale": 0.5, "offset": 0.1}, "name": "scale", "inbound_nodes": [[["img", 0, 0, {}]]]},
	  {"class_name": "Conv2D", "config": {"name": "conv", "filters": 2, "kernel_size": [1, 1], "strides": [1, 1], "padding": "valid",
	    "data_format": "channels_last", "dilation_rate": [1, 1], "activation": "relu", "use_bias": true},
	   "name": "conv", "inbound_nodes": [[["scale", 0, 0, {}]]]},
	  {"class_name": "Dense", "config": {"name": "d", "units": 2, "activation": "linear", "use_bias": true}, "name": "d", "inbound_nodes": [[["seq", 0, 0, {}]]]}
	 ],
	 "input_layers": [["img", 0, 0], ["seq", 0, 0]], "output_layers": [["conv", 0, 0], ["d", 0, 0]]}}`
	w := WeightMap{"conv/kernel": f32([]int64{1, 1, 3, 2}, 6), "conv/bias": f32([]int64{2}, 2),
		"d/kernel": f32([]int64{4, 2}, 8), "d/bias": f32([]int64{2}, 2)}
	for _, layout := range []string{"", LayoutNHWC, LayoutNCHW} {
		mp, err := convertProto([]byte(cfg), w, Options{File: "f.json", Layout: layout})
		if err != nil {
			t.Fatal(err)
		}
		g := mp.GetGraph()
		transposes := 0
		for _, n := range g.GetNode() {
			if n.GetOpType() == "Transpose" {
				transposes++
			}
		}
		var shapes []string
		for _, v := range g.GetInput() {
			var d []int64
			for _, x := range v.GetType().GetTensorType().GetShape().GetDim() {
				if x.GetDimParam() != "" {
					d = append(d, -1)
				} else {
					d = append(d, x.GetDimValue())
				}
			}
			shapes = append(shapes, fmt.Sprint(v.GetName(), d))
		}
		meta := map[string]string{}
		for _, p := range mp.GetMetadataProps() {
			meta[p.GetKey()] = p.GetValue()
		}
		// The provenance for the error map: the Conv2D layer's output,
		// computed channels-first, is Keras's laid channels-last.
		if src := meta[canonical.MetaSourceTensors]; !strings.Contains(src, `{"tensor":"conv:0:0","op":"Conv2D","perm":[0,2,3,1]}`) {
			t.Errorf("layout %q: source tensors %s, want the conv layer's output with its permutation", layout, src)
		}
		delete(meta, canonical.MetaSourceTensors)
		if layout != LayoutNCHW {
			if transposes != 2 || strings.Join(shapes, " ") != "img[-1 8 6 3] seq[-1 5 4]" || len(meta) != 0 {
				t.Errorf("layout %q: %d Transposes, inputs %v, metadata %v", layout, transposes, shapes, meta)
			}
			continue
		}
		if transposes != 0 || strings.Join(shapes, " ") != "img[-1 3 8 6] seq[-1 5 4]" {
			t.Errorf("layout nchw: %d Transposes, inputs %v", transposes, shapes)
		}
		if meta[MetaLayout] != "nchw" || meta[MetaChannelsFirst] != "img,conv" {
			t.Errorf("layout nchw: metadata %v", meta)
		}
	}
}

// An unknown layout is a *LayoutError.
func TestLayoutUnknown(t *testing.T) {
	cfg := `{"class_name": "Sequential", "config": {"name": "s", "layers": [
	  {"class_name": "Flatten", "config": {"name": "f", "batch_input_shape": [null, 4, 4, 1]}}]}}`
	_, err := Convert([]byte(cfg), nil, Options{Layout: "NCHW"})
	var le *LayoutError
	if !errors.As(err, &le) || le.Layout != "NCHW" {
		t.Errorf("err = %v, want a *LayoutError", err)
	}
}
