package node

import (
	"context"
	"errors"
	"testing"

	"github.com/onnxconv/onnxconv/internal/testpaths"
)

// A Conn serves a stream of requests from one node process: the script
// reads each request (header and blobs of announced sizes), answers it,
// and ends when stdin is closed.
func TestConnStream(t *testing.T) {
	nodeExe, _ := testpaths.Node(t)
	const echo = `
(async () => {
  const next = frame.stream();
  for (let n = 1; ; n++) {
    const r = await next();
    if (!r) return;
    const blobs = r.head.sizes.map((s) => Buffer.from(r.take(s)).reverse());
    frame.reply({ ok: true, n, tag: r.head.tag, outputs: blobs.map((b) => ({ bytes: b.length })) }, blobs);
  }
})();`
	c, err := Start(context.Background(), Process{Node: nodeExe, Args: []string{"-e", FrameJS + echo}, MaxStderr: 4096}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	type ans struct {
		OK      bool
		N       int
		Tag     string
		Outputs []struct{ Bytes int64 }
	}
	for i, tag := range []string{"first", "second", "third"} {
		var a ans
		body, err := c.Call(context.Background(), map[string]string{"tag": tag}, [][]byte{[]byte("abc"), []byte("de")}, &a, func() (int64, error) {
			var n int64
			for _, o := range a.Outputs {
				n += o.Bytes
			}
			return n, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !a.OK || a.N != i+1 || a.Tag != tag || string(body) != "cbaed" {
			t.Errorf("answer %d: %+v %q", i, a, body)
		}
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	var a ans
	if _, err := c.Call(context.Background(), map[string]string{}, nil, &a, func() (int64, error) { return 0, nil }); !errors.Is(err, ErrExited) {
		t.Errorf("call after Close: %v, want ErrExited", err)
	}
}
