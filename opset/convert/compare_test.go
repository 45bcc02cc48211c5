package convert

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/x448/float16"
	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// readDataSet reads input_N.pb and output_N.pb of one test data set.
func readDataSet(dir string) (ins, outs []*onnxpb.TensorProto, err error) {
	read := func(prefix string) ([]*onnxpb.TensorProto, error) {
		var ts []*onnxpb.TensorProto
		for i := 0; ; i++ {
			data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s_%d.pb", prefix, i)))
			if os.IsNotExist(err) {
				return ts, nil
			}
			if err != nil {
				return nil, err
			}
			var tp onnxpb.TensorProto
			if err := proto.Unmarshal(data, &tp); err != nil {
				return nil, fmt.Errorf("%s_%d.pb: %w (not a tensor: sequence or optional data)", prefix, i, err)
			}
			ts = append(ts, &tp)
		}
	}
	if ins, err = read("input"); err != nil {
		return nil, nil, err
	}
	outs, err = read("output")
	return ins, outs, err
}

// compareOutputs compares as the ONNX backend runner does: floats with
// rtol 1e-3 and atol 1e-7 (NaN equal to NaN), everything else exactly.
func compareOutputs(got, want []*onnxpb.TensorProto) error { return compareScaled(got, want, 0) }

// compareScaled is compareOutputs with the absolute tolerance of each
// float output raised by atolScale times its largest magnitude, as verify's
// profiles do (fp32: 1e-5): for whole models whose stored outputs another
// framework computed, where float32 accumulation order moves the elements
// near zero by more than 1e-7.
func compareScaled(got, want []*onnxpb.TensorProto, atolScale float64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d outputs, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.GetDataType() != w.GetDataType() {
			return fmt.Errorf("output %d: type %v, want %v", i, onnxpb.TensorProto_DataType(g.GetDataType()), onnxpb.TensorProto_DataType(w.GetDataType()))
		}
		if fmt.Sprint(g.GetDims()) != fmt.Sprint(w.GetDims()) {
			return fmt.Errorf("output %d: dims %v, want %v", i, g.GetDims(), w.GetDims())
		}
		gv, err1 := numbers(g)
		wv, err2 := numbers(w)
		if err1 != nil || err2 != nil {
			if proto.Equal(g, w) {
				continue
			}
			return fmt.Errorf("output %d: cannot compare (%v %v)", i, err1, err2)
		}
		if len(gv) != len(wv) {
			return fmt.Errorf("output %d: %d elements, want %d", i, len(gv), len(wv))
		}
		isFloat := isFloatType(w.GetDataType())
		atol := 1e-7
		if isFloat && atolScale > 0 {
			peak := 0.0
			for _, v := range wv {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					peak = math.Max(peak, math.Abs(v))
				}
			}
			atol = math.Max(atol, atolScale*peak)
		}
		for k := range wv {
			a, b := gv[k], wv[k]
			if isFloat {
				if math.IsNaN(a) && math.IsNaN(b) {
					continue
				}
				if math.Abs(a-b) <= atol+1e-3*math.Abs(b) || a == b {
					continue
				}
			} else if a == b {
				continue
			}
			return fmt.Errorf("output %d element %d: %g, want %g", i, k, a, b)
		}
	}
	return nil
}

func isFloatType(dt int32) bool {
	switch canonical.DataType(dt) {
	case canonical.Float, canonical.Double, canonical.Float16, canonical.BFloat16:
		return true
	}
	return false
}

// numbers decodes a numeric TensorProto into float64s.
func numbers(tp *onnxpb.TensorProto) ([]float64, error) {
	dt := canonical.DataType(tp.GetDataType())
	raw := tp.GetRawData()
	var out []float64
	if raw == nil {
		switch dt {
		case canonical.Float:
			for _, f := range tp.GetFloatData() {
				out = append(out, float64(f))
			}
		case canonical.Double:
			out = append(out, tp.GetDoubleData()...)
		case canonical.Int64:
			for _, v := range tp.GetInt64Data() {
				out = append(out, float64(v))
			}
		case canonical.Uint64, canonical.Uint32:
			for _, v := range tp.GetUint64Data() {
				out = append(out, float64(v))
			}
		case canonical.Int32, canonical.Int16, canonical.Int8, canonical.Uint16, canonical.Uint8, canonical.Bool:
			for _, v := range tp.GetInt32Data() {
				out = append(out, float64(v))
			}
		case canonical.Float16:
			for _, v := range tp.GetInt32Data() {
				out = append(out, float64(float16.Frombits(uint16(v)).Float32()))
			}
		default:
			return nil, fmt.Errorf("type %v", dt)
		}
		return out, nil
	}
	size := canonical.ElemBits(dt) / 8
	if size == 0 || len(raw)%size != 0 {
		return nil, fmt.Errorf("type %v", dt)
	}
	for i := 0; i+size <= len(raw); i += size {
		b := raw[i:]
		var v float64
		switch dt {
		case canonical.Float:
			v = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		case canonical.Double:
			v = math.Float64frombits(binary.LittleEndian.Uint64(b))
		case canonical.Float16:
			v = float64(float16.Frombits(binary.LittleEndian.Uint16(b)).Float32())
		case canonical.BFloat16:
			v = float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b)) << 16))
		case canonical.Int64:
			v = float64(int64(binary.LittleEndian.Uint64(b)))
		case canonical.Uint64:
			v = float64(binary.LittleEndian.Uint64(b))
		case canonical.Int32:
			v = float64(int32(binary.LittleEndian.Uint32(b)))
		case canonical.Uint32:
			v = float64(binary.LittleEndian.Uint32(b))
		case canonical.Int16:
			v = float64(int16(binary.LittleEndian.Uint16(b)))
		case canonical.Uint16:
			v = float64(binary.LittleEndian.Uint16(b))
		case canonical.Int8:
			v = float64(int8(b[0]))
		case canonical.Uint8, canonical.Bool:
			v = float64(b[0])
		default:
			return nil, fmt.Errorf("type %v", dt)
		}
		out = append(out, v)
	}
	return out, nil
}
