package convert

import "strconv"

func itoa(i int) string { return strconv.Itoa(i) }

// mlAdapters adds the hand-written version steps of ai.onnx.ml operators.
func mlAdapters(t map[adapterKey]adapter) {}

// expandML rewrites an ai.onnx.ml op that does not exist below sc.new's
// version into ops valid at ml opset to.
func expandML(sc *stepCtx, to int) error {
	return blocked("keep ai.onnx.ml opset >= "+itoa(sc.new.SinceVersion), "%s does not exist before ai.onnx.ml opset %d and onnxconv has no expansion for it", sc.n.OpType, sc.new.SinceVersion)
}
