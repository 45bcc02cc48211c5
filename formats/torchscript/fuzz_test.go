package torchscript

import (
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// FuzzParse: the parser never panics or hangs on any source.
func FuzzParse(f *testing.F) {
	f.Add("class M(Module):\n  x : int\n  def forward(self: __torch__.M, x: Tensor) -> Tensor:\n    if torch.eq(1, 1):\n      y = x\n    else:\n      pass\n    for _0 in range(3):\n      y = torch.add(y, x)\n    return (y, x[0], x[:, -1])\n")
	f.Add("def f(a: List[int]=[1, 2]) -> int:\n  return a[0] if a else -1\n")
	// All the code torch.jit.script and trace wrote into the fixtures.
	for _, src := range testpaths.ZipMembers(f, "../../fixtures/torchscript/*/model.pt", ".py") {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		_, _ = Parse("f.py", src)
	})
}

// FuzzOpen: opening any bytes as an archive never panics.
func FuzzOpen(f *testing.F) {
	testpaths.AddFiles(f, "../../fixtures/torchscript/branchy_scripted/model.pt", "../../fixtures/torchscript/state_dict.pt")
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Open("f.pt", data)
		if err != nil {
			return
		}
		for _, c := range a.Constants {
			if r := AsTensor(c); r != nil {
				_, _ = a.Tensor("c", r)
			}
		}
	})
}
