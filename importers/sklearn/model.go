package sklearn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/build"
	"github.com/onnxconv/onnxconv/formats/pickle"
)

// InputName is the graph input: double [N, n_features_in_].
const InputName = "X"

// Opset is the ai.onnx opset of the graphs made.
const Opset = 17

// supported maps each supported class to its reader: a transformer or a
// predictor (the compositions, nil here, are read by readStep; Pipeline
// by readModel and readTransformer).
var supported = map[string]func(*obj) (any, error){
	"LinearRegression":               pred(readLinearRegressor),
	"Ridge":                          pred(readLinearRegressor),
	"Lasso":                          pred(readLinearRegressor),
	"ElasticNet":                     pred(readLinearRegressor),
	"SGDRegressor":                   pred(readLinearRegressor),
	"LinearSVR":                      pred(readLinearRegressor),
	"LogisticRegression":             pred(readLinearClassifier),
	"SGDClassifier":                  pred(readLinearClassifier),
	"LinearSVC":                      pred(readLinearClassifier),
	"Perceptron":                     pred(readLinearClassifier),
	"GaussianNB":                     pred(readGaussianNB),
	"BernoulliNB":                    pred(readBernoulliNB),
	"KMeans":                         pred(readKMeans),
	"MLPClassifier":                  pred(readMLP),
	"MLPRegressor":                   pred(readMLP),
	"StandardScaler":                 tr(readScaler),
	"MinMaxScaler":                   tr(readScaler),
	"MaxAbsScaler":                   tr(readScaler),
	"RobustScaler":                   tr(readScaler),
	"Normalizer":                     tr(readNormalizer),
	"PCA":                            tr(readProjection),
	"TruncatedSVD":                   tr(readProjection),
	"PolynomialFeatures":             tr(readPolynomial),
	"DecisionTreeClassifier":         pred(readDecisionTree),
	"DecisionTreeRegressor":          pred(readDecisionTree),
	"RandomForestClassifier":         pred(readForest),
	"RandomForestRegressor":          pred(readForest),
	"ExtraTreesClassifier":           pred(readForest),
	"ExtraTreesRegressor":            pred(readForest),
	"GradientBoostingClassifier":     pred(readGradientBoosting),
	"GradientBoostingRegressor":      pred(readGradientBoosting),
	"HistGradientBoostingClassifier": pred(readHistGradientBoosting),
	"HistGradientBoostingRegressor":  pred(readHistGradientBoosting),
	"IsolationForest":                pred(readIsolationForest),
	"SVC":                            pred(readSVM),
	"NuSVC":                          pred(readSVM),
	"SVR":                            pred(readSVM),
	"NuSVR":                          pred(readSVM),
	"KNeighborsClassifier":           pred(readKNN),
	"KNeighborsRegressor":            pred(readKNN),
	"SimpleImputer":                  tr(readImputer),
	"OneHotEncoder":                  tr(readOneHot),
	"OrdinalEncoder":                 tr(readOrdinal),
	"FunctionTransformer":            tr(readFunctionTransformer),
	"ColumnTransformer":              nil, // readStep
	"FeatureUnion":                   nil, // readStep
	"Pipeline":                       nil, // readModel, readTransformer
}

// readStep reads an estimator other than a Pipeline.
func readStep(o *obj) (any, error) {
	switch o.class {
	case "ColumnTransformer":
		return readColumnTransformer(o)
	case "FeatureUnion":
		return readFeatureUnion(o)
	}
	read := supported[o.class]
	if read == nil {
		return nil, &UnsupportedClassError{Class: o.class, Nearest: nearest(o.class)}
	}
	return read(o)
}

func pred(f func(*obj) (predictor, error)) func(*obj) (any, error) {
	return func(o *obj) (any, error) { return f(o) }
}

func tr(f func(*obj) (transformer, error)) func(*obj) (any, error) {
	return func(o *obj) (any, error) { return f(o) }
}

// Model is a parsed estimator: transformer steps and an optional final
// predictor (nil: the last transformer's output is the model's output).
type Model struct {
	Class string
	steps []transformer
	final predictor
	nIn   int
}

// readModel turns the unpickled value into a Model. An attribute that
// does not fit is reported with the scikit-learn version the file
// records.
func readModel(v pickle.Value) (*Model, error) {
	m, err := readModelLayout(v)
	if err != nil {
		var ae *AttributeError
		if errors.As(err, &ae) && ae.Version == "" {
			ae.Version = fileVersion(v)
		}
		return nil, err
	}
	return m, nil
}

func readModelLayout(v pickle.Value) (*Model, error) {
	o, err := asObj(v, "")
	if err != nil {
		return nil, err
	}
	m := &Model{Class: o.class}
	if err := m.add(o, 0); err != nil {
		return nil, err
	}
	if len(m.steps) == 0 && m.final == nil {
		return nil, fmt.Errorf("%s: a pipeline with no steps", o.path)
	}
	if len(m.steps) > 0 {
		m.nIn = m.steps[0].inDim()
	} else {
		m.nIn = m.final.inDim()
	}
	return m, nil
}

func (m *Model) add(o *obj, depth int) error {
	if m.final != nil {
		return fmt.Errorf("%s: a step after the final estimator", o.path)
	}
	if depth > 16 {
		return fmt.Errorf("%s: pipelines nested more than 16 deep", o.path)
	}
	if _, ok := supported[o.class]; !ok {
		return &UnsupportedClassError{Class: o.class, Nearest: nearest(o.class)}
	}
	if o.class == "Pipeline" {
		steps, err := pairs(o, "steps")
		if err != nil {
			return err
		}
		for i, s := range steps {
			if s.v == nil || s.v == "passthrough" {
				continue
			}
			so, err := asObj(s.v, fmt.Sprintf("%s.steps[%d] %q", o.path, i, s.name))
			if err != nil {
				return err
			}
			so.path += " " + so.class
			if err := m.add(so, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	st, err := readStep(o)
	if err != nil {
		return err
	}
	// Check the widths chain.
	prev := -1
	if len(m.steps) > 0 {
		prev = m.steps[len(m.steps)-1].outDim()
	}
	switch st := st.(type) {
	case transformer:
		if prev >= 0 && st.inDim() != prev {
			return fmt.Errorf("%s: takes %d features, the step before gives %d", o.path, st.inDim(), prev)
		}
		m.steps = append(m.steps, st)
	case predictor:
		if prev >= 0 && st.inDim() != prev {
			return fmt.Errorf("%s: takes %d features, the step before gives %d", o.path, st.inDim(), prev)
		}
		m.final = st
	}
	return nil
}

// NumFeatures is the width of the input.
func (m *Model) NumFeatures() int { return m.nIn }

// outputs lists the model's outputs.
func (m *Model) outputs() []output {
	if m.final != nil {
		return m.final.outputs()
	}
	return []output{{name: "variable", kind: outMatrix, cols: m.steps[len(m.steps)-1].outDim()}}
}

// Predict computes the outputs for x (double [N, NumFeatures]) in Go,
// from the parsed estimator, in scikit-learn's order of operations.
func (m *Model) predict(x *mat) []result {
	for _, s := range m.steps {
		x = s.transform(x)
	}
	if m.final == nil {
		return []result{{m: x}}
	}
	return m.final.predict(x)
}

// build makes the ONNX model.
func (m *Model) build() (*canonical.Model, error) {
	g := &graph{b: build.New(Opset)}
	x := InputName
	g.b.Reserve(InputName)
	for _, o := range m.outputs() {
		g.b.Reserve(o.name)
	}
	for i, s := range m.steps {
		g.prefix = fmt.Sprintf("step%d_", i)
		x = s.emit(g, x)
	}
	g.prefix = "final_"
	var names []string
	if m.final != nil {
		names = m.final.emit(g, x)
	} else {
		names = []string{x}
	}
	outs := m.outputs()
	var vis []build.Info
	for i, o := range outs {
		g.opTo(o.name, "Identity", []string{names[i]})
		switch o.kind {
		case outLabels:
			vis = append(vis, build.TensorInfoDims(o.name, canonical.Int64, "N"))
		case outVector:
			vis = append(vis, build.TensorInfoDims(o.name, canonical.Double, "N"))
		default:
			vis = append(vis, build.TensorInfoDims(o.name, canonical.Double, "N", o.cols))
		}
	}
	if g.err != nil {
		return nil, fmt.Errorf("sklearn: building the graph of %s: %w", m.Class, g.err)
	}
	mod, err := g.b.Model(m.Class, []build.Info{build.TensorInfoDims(InputName, canonical.Double, "N", m.nIn)}, vis)
	if err != nil {
		return nil, fmt.Errorf("sklearn: building the graph of %s: %w", m.Class, err)
	}
	mod.Domain = "ai.onnxconv.sklearn"
	mod.DocString = "scikit-learn " + m.Class + ", converted by onnxconv from its pickle, which was read as data and not executed"
	return mod, nil
}

// run computes the model on a canonical input tensor (double or float
// [N, F]) and returns the output tensors, named and shaped as the graph's.
func (m *Model) run(in *canonical.Tensor) ([]*canonical.Tensor, error) {
	if len(in.Dims) != 2 || in.Dims[1] != int64(m.nIn) {
		return nil, fmt.Errorf("input %s: shape %v, want [N, %d]", in.Name, in.Dims, m.nIn)
	}
	vals, err := in.Float64s()
	if err != nil {
		return nil, fmt.Errorf("input %s: %w", in.Name, err)
	}
	x := &mat{r: int(in.Dims[0]), c: m.nIn, d: vals}
	res := m.predict(x)
	outs := m.outputs()
	tensors := make([]*canonical.Tensor, len(outs))
	for i, o := range outs {
		r := res[i]
		switch o.kind {
		case outLabels:
			raw := make([]byte, 8*len(r.ints))
			for j, v := range r.ints {
				binary.LittleEndian.PutUint64(raw[8*j:], uint64(v))
			}
			tensors[i] = canonical.NewTensor(o.name, canonical.Int64, []int64{int64(len(r.ints))}, raw)
		default:
			dims := []int64{int64(r.m.r), int64(r.m.c)}
			if o.kind == outVector {
				dims = []int64{int64(r.m.r * r.m.c)}
			}
			raw := make([]byte, 8*len(r.m.d))
			for j, v := range r.m.d {
				binary.LittleEndian.PutUint64(raw[8*j:], math.Float64bits(v))
			}
			tensors[i] = canonical.NewTensor(o.name, canonical.Double, dims, raw)
		}
	}
	return tensors, nil
}
