package suggest

import "testing"

func TestClosest(t *testing.T) {
	names := []string{"onnxruntime-1.17", "onnxruntime-1.18", "tensorrt-10", "openvino-2025"}
	for _, c := range []struct{ in, want string }{
		{"onnxruntime-1.71", "onnxruntime-1.17"},
		{"tensorrt10", "tensorrt-10"},
		{"OpenVino-2025", "openvino-2025"},
		{"coreml", ""},
	} {
		if got := Closest(c.in, names); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
