//go:build cgo && libtorch

package libtorch

/*
#cgo CXXFLAGS: -std=c++17 -I/usr/include/torch/csrc/api/include -Wno-deprecated-declarations
#cgo LDFLAGS: -ltorch -ltorch_cpu -lc10
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/onnxconv/onnxconv/canonical"
)

// Available reports whether this build has libtorch.
const Available = true

// Version is the libtorch version the shim was built against.
func Version() string { return C.GoString(C.lt_version()) }

// Module is a loaded TorchScript archive.
type Module struct {
	m    *C.lt_module
	path string
}

// Load loads the archive at path on the CPU, in eval mode.
func Load(path string) (*Module, error) {
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var cerr *C.char
	m := C.lt_load(cp, &cerr)
	if m == nil {
		return nil, &Error{Path: path, Msg: takeErr(cerr)}
	}
	return &Module{m: m, path: path}, nil
}

// Error is an error libtorch raised.
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("libtorch: %s: %s", e.Path, e.Msg) }

func takeErr(c *C.char) string {
	if c == nil {
		return "unknown error"
	}
	defer C.free(unsafe.Pointer(c))
	return C.GoString(c)
}

// Close frees the module.
func (m *Module) Close() error {
	if m.m != nil {
		C.lt_free(m.m)
		m.m = nil
	}
	return nil
}

// Run calls method with inputs (a 0-d tensor feeds an int, float or bool
// parameter as a number) and returns its result flattened to tensors.
func (m *Module) Run(method string, inputs []*canonical.Tensor, threads int) ([]*canonical.Tensor, error) {
	return m.call(method, inputs, threads, nil)
}

// RunCapture calls a copy of method's graph that returns the results of
// the submodule calls named in keys ("PATH:K": the K-th call, from 0, of
// the submodule at attribute path PATH, as "layers.0.conv1", in the
// method's own block, not in a loop or branch) instead of its own, one
// tensor each, in the order of keys: the intermediate values of the
// archive, for the error map.
func (m *Module) RunCapture(method string, inputs []*canonical.Tensor, keys []string, threads int) ([]*canonical.Tensor, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	return m.call(method, inputs, threads, keys)
}

func (m *Module) call(method string, inputs []*canonical.Tensor, threads int, keys []string) ([]*canonical.Tensor, error) {
	if m.m == nil {
		return nil, errors.New("libtorch: the module is closed")
	}
	n := len(inputs)
	cins := (*C.lt_tensor)(C.calloc(C.size_t(max(n, 1)), C.size_t(unsafe.Sizeof(C.lt_tensor{}))))
	defer C.free(unsafe.Pointer(cins))
	ins := unsafe.Slice(cins, max(n, 1))
	var bufs []unsafe.Pointer
	defer func() {
		for _, b := range bufs {
			C.free(b)
		}
	}()
	for i, t := range inputs {
		if len(t.Dims) > 8 {
			return nil, fmt.Errorf("libtorch: input %d of rank %d", i, len(t.Dims))
		}
		raw, err := t.Bytes()
		if err != nil {
			return nil, fmt.Errorf("libtorch: input %d: %w", i, err)
		}
		buf := C.malloc(C.size_t(max(len(raw), 1)))
		bufs = append(bufs, buf)
		copy(unsafe.Slice((*byte)(buf), max(len(raw), 1)), raw)
		ins[i].dtype = C.int(t.DataType)
		ins[i].rank = C.int(len(t.Dims))
		for d, v := range t.Dims {
			ins[i].dims[d] = C.int64_t(v)
		}
		ins[i].data = buf
		ins[i].nbytes = C.int64_t(len(raw))
	}
	cm := C.CString(method)
	defer C.free(unsafe.Pointer(cm))
	var outs *C.lt_tensor
	var nOut C.int
	var cerr *C.char
	var rc C.int
	if keys == nil {
		rc = C.lt_run(m.m, cm, cins, C.int(n), C.int(threads), &outs, &nOut, &cerr)
	} else {
		ckeys := (**C.char)(C.calloc(C.size_t(len(keys)), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
		defer C.free(unsafe.Pointer(ckeys))
		ks := unsafe.Slice(ckeys, len(keys))
		for i, k := range keys {
			ks[i] = C.CString(k)
			defer C.free(unsafe.Pointer(ks[i]))
		}
		rc = C.lt_run_capture(m.m, cm, cins, C.int(n), C.int(threads), ckeys, C.int(len(keys)), &outs, &nOut, &cerr)
	}
	if rc != 0 {
		return nil, &Error{Path: m.path, Msg: takeErr(cerr)}
	}
	defer C.lt_free_outputs(outs, nOut)
	var res []*canonical.Tensor
	for i, o := range unsafe.Slice(outs, int(nOut)) {
		dt := canonical.DataType(o.dtype)
		if dt == 0 {
			return nil, fmt.Errorf("libtorch: %s: output %d has an element type onnxconv does not read", m.path, i)
		}
		dims := make([]int64, int(o.rank))
		for d := range dims {
			dims[d] = int64(o.dims[d])
		}
		raw := C.GoBytes(o.data, C.int(o.nbytes))
		res = append(res, canonical.NewTensor(fmt.Sprintf("output_%d", i), dt, dims, raw))
	}
	return res, nil
}
