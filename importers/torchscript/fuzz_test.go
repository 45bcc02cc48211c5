package torchscript

import (
	"archive/zip"
	"bytes"
	"testing"

	fts "github.com/onnxconv/onnxconv/formats/torchscript"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// FuzzConvert: walking any source over a one-module archive is an error
// or a model, never a panic or a hang.
func FuzzConvert(f *testing.F) {
	f.Add("class M(Module):\n  def forward(self: __torch__.M, x: Tensor) -> Tensor:\n    y = torch.relu(x)\n    for _0 in range(3):\n      y = torch.add(y, x)\n    if bool(torch.gt(torch.sum(y), 0)):\n      y = torch.neg(y)\n    else:\n      pass\n    return torch.softmax(torch.view(y, [2, -1]), -1)\n")
	f.Add("class M(Module):\n  def forward(self: __torch__.M, x: Tensor) -> Tensor:\n    a, b, = torch.chunk(x, 2, 1)\n    return torch.cat([torch.transpose(a, 0, 1), b], 0)\n")
	// The top-level code of the fixtures torch.jit.script and trace wrote.
	for _, src := range testpaths.ZipMembers(f, "../../fixtures/torchscript/*/model.pt", "/code/__torch__.py") {
		f.Add(src)
	}
	root := "\x80\x02c__torch__\nM\nq\x00)\x81}q\x01X\x08\x00\x00\x00trainingq\x02\x89sb."
	f.Fuzz(func(t *testing.T, src string) {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, e := range [][2]string{{"m/data.pkl", root}, {"m/code/__torch__.py", src}} {
			w, err := zw.CreateHeader(&zip.FileHeader{Name: e[0], Method: zip.Store})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte(e[1])); err != nil {
				t.Fatal(err)
			}
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		a, err := fts.Open("f.pt", buf.Bytes())
		if err != nil {
			return
		}
		_, _, _ = Convert(a, Options{Shapes: [][]int64{{2, 4}}, Bind: map[string]value{}})
	})
}
