//go:build cgo

package ort

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"

	ortgo "github.com/yalue/onnxruntime_go"
	"google.golang.org/protobuf/proto"

	"github.com/onnxconv/onnxconv/canonical/onnxpb"
)

// SessionOption changes how NewSession sets up a session.
type SessionOption func(*sessionConfig)

type sessionConfig struct {
	threads  int
	optLevel ortgo.GraphOptimizationLevel
	profile  string
}

// WithIntraOpThreads sets the number of intra-op threads (0: ONNX Runtime
// chooses; 1 for fair single-thread benchmarks), overriding the Runtime's.
func WithIntraOpThreads(n int) SessionOption {
	return func(c *sessionConfig) { c.threads = n }
}

// WithoutOptimization disables ONNX Runtime's graph optimizations (fusions,
// constant folding), so that every node of the model runs as written.
func WithoutOptimization() SessionOption {
	return func(c *sessionConfig) { c.optLevel = ortgo.GraphOptimizationLevelDisableAll }
}

// WithProfiling turns on ONNX Runtime's profiler for the session: every
// run's nodes, with their kernel times, go to a JSON file (Chrome trace
// format) named prefix + "_" + a timestamp + ".json", written when the
// session is closed. The Shape probe session, if any, is not profiled.
func WithProfiling(prefix string) SessionOption {
	return func(c *sessionConfig) { c.profile = prefix }
}

// IOInfo describes one graph input or output as ONNX Runtime sees it.
type IOInfo struct {
	Name string
	// DataType is the ONNX element type (onnxpb.TensorProto_DataType), 0 if
	// the value is not a tensor.
	DataType onnxpb.TensorProto_DataType
	// Dims are the declared dims; -1 marks a symbolic or unknown dim.
	Dims []int64
	// Tensor is false for sequences, maps and other non-tensor values.
	Tensor bool
	// RankKnown is false when the model declares no shape for the value
	// (ONNX Runtime then reports no dims, as for a scalar).
	RankKnown bool
}

// Session is a loaded model that can be run repeatedly. Run may be called
// from several goroutines at once; Close must not race with Run.
type Session struct {
	path    string
	sess    *ortgo.DynamicAdvancedSession
	inputs  []IOInfo
	outputs []IOInfo
	inIndex map[string]int
	// probe, if not nil, computes the shapes of outputs probeIdx.
	probe    *ortgo.DynamicAdvancedSession
	probeIdx []int
}

// NewSession loads the model at modelPath. By default it uses the Runtime's
// thread count and all graph optimizations.
func (r *Runtime) NewSession(modelPath string, opts ...SessionOption) (*Session, error) {
	cfg := sessionConfig{threads: r.threads, optLevel: ortgo.GraphOptimizationLevelEnableAll}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.threads < 0 {
		return nil, fmt.Errorf("ort session %s: intra-op threads must be >= 0, got %d", modelPath, cfg.threads)
	}
	so, err := ortgo.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("ort session %s: options: %w", modelPath, err)
	}
	defer func() { _ = so.Destroy() }()
	if err := so.SetIntraOpNumThreads(cfg.threads); err != nil {
		return nil, fmt.Errorf("ort session %s: intra-op threads: %w", modelPath, err)
	}
	if err := so.SetInterOpNumThreads(1); err != nil {
		return nil, fmt.Errorf("ort session %s: inter-op threads: %w", modelPath, err)
	}
	if err := so.SetExecutionMode(ortgo.ExecutionModeSequential); err != nil {
		return nil, fmt.Errorf("ort session %s: execution mode: %w", modelPath, err)
	}
	if err := so.SetGraphOptimizationLevel(cfg.optLevel); err != nil {
		return nil, fmt.Errorf("ort session %s: optimization level: %w", modelPath, err)
	}
	ins, outs, err := ortgo.GetInputOutputInfoWithOptions(modelPath, so)
	if err != nil {
		return nil, fmt.Errorf("ort session %s: load: %w", modelPath, err)
	}
	s := &Session{path: modelPath, inIndex: map[string]int{}}
	inNames := make([]string, len(ins))
	for i, in := range ins {
		s.inputs = append(s.inputs, ioInfo(in))
		inNames[i] = in.Name
		s.inIndex[in.Name] = i
	}
	model := readModel(modelPath)
	shaped := declaredShapes(model)
	outNames := make([]string, len(outs))
	for i, out := range outs {
		info := ioInfo(out)
		if has, ok := shaped[out.Name]; ok {
			info.RankKnown = info.Tensor && has
		}
		s.outputs = append(s.outputs, info)
		outNames[i] = out.Name
	}
	if len(outNames) == 0 {
		return nil, fmt.Errorf("ort session %s: the model has no outputs", modelPath)
	}
	if len(inNames) == 0 {
		// onnxruntime_go indexes the first input name; ONNX Runtime itself
		// runs input-less graphs, but the wrapper cannot.
		return nil, fmt.Errorf("ort session %s: models without graph inputs are not supported", modelPath)
	}
	if cfg.profile != "" {
		if err := so.EnableProfiling(cfg.profile); err != nil {
			return nil, fmt.Errorf("ort session %s: profiling: %w", modelPath, err)
		}
	}
	s.sess, err = ortgo.NewDynamicAdvancedSession(modelPath, inNames, outNames, so)
	if err != nil {
		return nil, fmt.Errorf("ort session %s: %w", modelPath, err)
	}
	// Outputs that must be preallocated but whose shape is only known at run
	// time get their shape from a probe: the same graph ending in Shape ops.
	var probeNames []string
	for i, o := range s.outputs {
		if o.Tensor && needsPrealloc(o) && (!o.RankKnown || !static(o.Dims)) {
			s.probeIdx = append(s.probeIdx, i)
			probeNames = append(probeNames, o.Name)
		}
	}
	if len(probeNames) > 0 {
		if model == nil {
			_ = s.sess.Destroy()
			return nil, fmt.Errorf("ort session %s: cannot parse the model to probe output shapes", modelPath)
		}
		b, pOut, err := probeModel(model, probeNames)
		if err != nil {
			_ = s.sess.Destroy()
			return nil, fmt.Errorf("ort session %s: %w", modelPath, err)
		}
		if cfg.profile != "" {
			if err := so.DisableProfiling(); err != nil {
				_ = s.sess.Destroy()
				return nil, fmt.Errorf("ort session %s: profiling: %w", modelPath, err)
			}
		}
		// External data of the probe is found next to the original model.
		if err := so.AddSessionConfigEntry("session.model_external_initializers_file_folder_path",
			filepath.Dir(modelPath)); err != nil {
			_ = s.sess.Destroy()
			return nil, fmt.Errorf("ort session %s: %w", modelPath, err)
		}
		s.probe, err = ortgo.NewDynamicAdvancedSessionWithONNXData(b, inNames, pOut, so)
		if err != nil {
			_ = s.sess.Destroy()
			return nil, fmt.Errorf("ort session %s: Shape probe: %w", modelPath, err)
		}
	}
	return s, nil
}

// readModel parses the model file; nil if it cannot (ONNX Runtime then
// reports the problem when it loads the file).
func readModel(modelPath string) *onnxpb.ModelProto {
	b, err := os.ReadFile(modelPath)
	if err != nil {
		return nil
	}
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(b, &m); err != nil {
		return nil
	}
	return &m
}

// declaredShapes tells, for each graph output name, whether the model
// declares a shape for it.
func declaredShapes(m *onnxpb.ModelProto) map[string]bool {
	res := map[string]bool{}
	for _, o := range m.GetGraph().GetOutput() {
		res[o.GetName()] = o.GetType().GetTensorType().GetShape() != nil
	}
	return res
}

// probeModel returns the model with its graph outputs replaced by the
// shapes (Shape op) of the outputs named in names, in that order.
func probeModel(m *onnxpb.ModelProto, names []string) ([]byte, []string, error) {
	pm := proto.Clone(m).(*onnxpb.ModelProto)
	g := pm.GetGraph()
	hasDefault := false
	for _, o := range pm.GetOpsetImport() {
		if o.GetDomain() == "" || o.GetDomain() == "ai.onnx" {
			hasDefault = true
		}
	}
	if !hasDefault {
		return nil, nil, fmt.Errorf("the model imports no ai.onnx opset for the Shape probe")
	}
	g.Output = nil
	var outNames []string
	for i, n := range names {
		out := fmt.Sprintf("__onnxconv_ort_shape_%d", i)
		g.Node = append(g.Node, &onnxpb.NodeProto{
			Name: ptr(out), OpType: ptr("Shape"), Input: []string{n}, Output: []string{out}})
		g.Output = append(g.Output, &onnxpb.ValueInfoProto{Name: ptr(out), Type: &onnxpb.TypeProto{
			Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
				ElemType: ptr(int32(onnxpb.TensorProto_INT64))}}}})
		outNames = append(outNames, out)
	}
	b, err := proto.Marshal(pm)
	if err != nil {
		return nil, nil, fmt.Errorf("marshal Shape probe: %w", err)
	}
	return b, outNames, nil
}

func ioInfo(in ortgo.InputOutputInfo) IOInfo {
	info := IOInfo{Name: in.Name, Tensor: in.OrtValueType == ortgo.ONNXTypeTensor}
	info.RankKnown = info.Tensor
	if info.Tensor {
		info.DataType = onnxpb.TensorProto_DataType(in.DataType)
		info.Dims = append([]int64{}, in.Dimensions...)
	}
	return info
}

// Inputs describes the graph inputs ONNX Runtime expects, in order
// (initializers are not among them).
func (s *Session) Inputs() []IOInfo { return append([]IOInfo(nil), s.inputs...) }

// Outputs describes the graph outputs, in order.
func (s *Session) Outputs() []IOInfo { return append([]IOInfo(nil), s.outputs...) }

// Close frees the session.
func (s *Session) Close() error {
	if s.sess == nil {
		return nil
	}
	err := s.sess.Destroy()
	s.sess = nil
	if s.probe != nil {
		if perr := s.probe.Destroy(); err == nil {
			err = perr
		}
		s.probe = nil
	}
	if err != nil {
		return fmt.Errorf("ort session %s: close: %w", s.path, err)
	}
	return nil
}

// Run runs the model once. inputs[i] goes to the graph input named
// inputs[i].Name, or to the i-th graph input if the name is empty; every
// graph input must be given exactly once. The outputs come back in
// graph-output order, named.
func (s *Session) Run(inputs []*onnxpb.TensorProto) ([]*onnxpb.TensorProto, error) {
	if s.sess == nil {
		return nil, fmt.Errorf("ort session %s: run after Close", s.path)
	}
	if len(inputs) != len(s.inputs) {
		return nil, fmt.Errorf("ort session %s: got %d inputs, the model takes %d (%s)",
			s.path, len(inputs), len(s.inputs), names(s.inputs))
	}
	vals := make([]ortgo.Value, len(s.inputs))
	defer destroyAll(vals)
	for i, tp := range inputs {
		if tp == nil {
			return nil, fmt.Errorf("ort session %s: input %d is nil", s.path, i)
		}
		slot := i
		if tp.GetName() != "" {
			j, ok := s.inIndex[tp.GetName()]
			if !ok {
				return nil, fmt.Errorf("ort session %s: input %d is named %q, the model's inputs are %s",
					s.path, i, tp.GetName(), names(s.inputs))
			}
			slot = j
		}
		if vals[slot] != nil {
			return nil, fmt.Errorf("ort session %s: input %q given twice", s.path, s.inputs[slot].Name)
		}
		v, err := toValue(tp)
		if err != nil {
			return nil, fmt.Errorf("ort session %s: input %q: %w", s.path, s.inputs[slot].Name, err)
		}
		vals[slot] = v
	}

	outs, err := s.run(vals)
	if err != nil {
		return nil, err
	}
	defer destroyAll(outs)
	res := make([]*onnxpb.TensorProto, len(outs))
	for i, v := range outs {
		tp, err := fromValue(s.outputs[i].Name, v)
		if err != nil {
			return nil, fmt.Errorf("ort session %s: %w", s.path, err)
		}
		res[i] = tp
	}
	return res, nil
}

// run runs the session. Outputs that onnxruntime_go cannot take back from
// ONNX Runtime's own allocation are allocated here: scalars (it rejects
// rank 0) and float16/bfloat16 (it copies one byte per element). When such
// an output's shape is not static, the Shape probe finds it first.
func (s *Session) run(inputs []ortgo.Value) ([]ortgo.Value, error) {
	shapes := make([][]int64, len(s.outputs))
	for i, o := range s.outputs {
		if o.RankKnown && static(o.Dims) {
			shapes[i] = o.Dims
		}
	}
	if s.probe != nil {
		pouts := make([]ortgo.Value, len(s.probeIdx))
		if err := s.probe.Run(inputs, pouts); err != nil {
			destroyAll(pouts)
			return nil, fmt.Errorf("ort session %s: run Shape probe: %w", s.path, err)
		}
		for k, i := range s.probeIdx {
			t, ok := pouts[k].(*ortgo.Tensor[int64])
			if !ok {
				destroyAll(pouts)
				return nil, fmt.Errorf("ort session %s: Shape probe of %q returned %T", s.path, s.outputs[i].Name, pouts[k])
			}
			shapes[i] = append([]int64{}, t.GetData()...)
		}
		destroyAll(pouts)
	}
	outs := make([]ortgo.Value, len(s.outputs))
	for i, o := range s.outputs {
		if !o.Tensor || !needsPrealloc(o) {
			continue
		}
		v, err := newOutput(o.DataType, shapes[i])
		if err != nil {
			destroyAll(outs)
			return nil, fmt.Errorf("ort session %s: output %q: %w", s.path, o.Name, err)
		}
		outs[i] = v
	}
	if err := s.sess.Run(inputs, outs); err != nil {
		destroyAll(outs)
		return nil, fmt.Errorf("ort session %s: run: %w", s.path, err)
	}
	return outs, nil
}

func needsPrealloc(o IOInfo) bool {
	return (o.RankKnown && len(o.Dims) == 0) || o.DataType == onnxpb.TensorProto_FLOAT16 ||
		o.DataType == onnxpb.TensorProto_BFLOAT16
}

func static(dims []int64) bool {
	for _, d := range dims {
		if d < 0 {
			return false
		}
	}
	return true
}

// newOutput allocates an output value of the given type and shape.
func newOutput(dt onnxpb.TensorProto_DataType, dims []int64) (ortgo.Value, error) {
	size := elemSize(dt)
	if size == 0 {
		return nil, fmt.Errorf("element type %s cannot be preallocated", dt)
	}
	n, err := numElements(dims)
	if err != nil {
		return nil, err
	}
	tp := &onnxpb.TensorProto{DataType: ptr(int32(dt)), Dims: dims, RawData: make([]byte, n*int64(size))}
	return toValue(tp)
}

// destroyAll destroys the values and clears the slice. onnxruntime_go may
// leave typed nil pointers in an output slice after a failed run; those are
// skipped.
func destroyAll(vals []ortgo.Value) {
	for i, v := range vals {
		if v != nil && !reflect.ValueOf(v).IsNil() {
			_ = v.Destroy()
		}
		vals[i] = nil
	}
}

func names(infos []IOInfo) string {
	s := ""
	for i, in := range infos {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%q", in.Name)
	}
	if s == "" {
		return "none"
	}
	return s
}
