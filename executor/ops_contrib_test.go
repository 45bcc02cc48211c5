package executor_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/onnxconv/onnxconv/canonical"
	"github.com/onnxconv/onnxconv/canonical/onnxtext"
	"github.com/onnxconv/onnxconv/executor"
)

// TestContribOpsRefuseBadInput feeds the contrib kernels inputs that do
// not fit together and wants an error, not a panic (an out-of-range read
// the executor would recover as a runtime.Error). (Their numbers are held to ONNX Runtime's in
// runtimes/ortnode.)
func TestContribOpsRefuseBadInput(t *testing.T) {
	head := `<ir_version: 9, opset_import: ["" : 17, "com.microsoft" : 1]>
g (float[1,1,8] x) => (float[1,1,8] y)
`
	cases := map[string]struct{ op, body string }{
		"gqa seqlens_k past the cache": {"GroupQueryAttention", `<float[1,1,4] k = {1, 2, 3, 4}, float[1,1,4] v = {1, 2, 3, 4}, float[1,1,2,4] pk = {1, 2, 3, 4, 5, 6, 7, 8}, int32[1] sl = {9}, int32 tot = {3}>
{ y, , = com.microsoft.GroupQueryAttention <num_heads: int = 2, kv_num_heads: int = 1> (x, k, v, pk, pk, sl, tot) }`},
		"gqa heads": {"GroupQueryAttention", `<float[1,1,4] k = {1, 2, 3, 4}, int32[1] sl = {0}, int32 tot = {1}>
{ y = com.microsoft.GroupQueryAttention <num_heads: int = 3, kv_num_heads: int = 2> (x, k, k, , , sl, tot) }`},
		"skip shape": {"SkipLayerNormalization", `<float[3] skip = {1, 2, 3}, float[8] gamma = {1, 1, 1, 1, 1, 1, 1, 1}>
{ y = com.microsoft.SkipLayerNormalization (x, skip, gamma) }`},
		"rotary position past the cache": {"RotaryEmbedding", `<int64[1] pos = {7}, float[2,4] c = {1, 1, 1, 1, 1, 1, 1, 1}>
{ y = com.microsoft.RotaryEmbedding (x, pos, c, c) }`},
		"gather scales shape": {"GatherBlockQuantized", `<uint8[2,8] d = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8}, int64[1] i = {0}, float[2,3] s = {1, 1, 1, 1, 1, 1}>
{ y = com.microsoft.GatherBlockQuantized <block_size: int = 16> (d, i, s) }`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mp, err := onnxtext.Parse(name, []byte(head+tc.body))
			if err != nil {
				t.Fatal(err)
			}
			m, err := canonical.FromProto(mp, "")
			if err != nil {
				t.Fatal(err)
			}
			x := canonical.NewTensor("x", canonical.Float, []int64{1, 1, 8}, make([]byte, 32))
			e, err := executor.New(m, executor.Options{})
			if err == nil {
				defer e.Close()
				_, err = e.RunValues(context.Background(), []*executor.Value{executor.TensorValue(x)})
			}
			var crash runtime.Error
			switch {
			case err == nil:
				t.Errorf("%s ran on inputs that do not fit", tc.op)
			case errors.As(err, &crash):
				t.Errorf("%s panicked: %v", tc.op, err)
			default:
				t.Log(err)
			}
		})
	}
}
