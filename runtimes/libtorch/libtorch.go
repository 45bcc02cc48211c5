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
		return nil, newError(path, takeErr(cerr))
	}
	return &Module{m: m, path: path}, nil
}

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

// Run calls method as c says and returns its result flattened to
// tensors, then the values of c.State after the call.
func (m *Module) Run(method string, c Call) ([]*canonical.Tensor, error) {
	return m.call(method, c, nil)
}

// RunCapture calls a copy of method's graph that returns the results of
// the submodule calls named in keys ("PATH:K": the K-th call, from 0, of
// the submodule at attribute path PATH, as "layers.0.conv1", in the
// method's own block, not in a loop or branch) instead of its own, one
// tensor each, in the order of keys: the intermediate values of the
// archive, for the error map. The inputs of c are passed in order (its
// Names and State do not apply).
func (m *Module) RunCapture(method string, c Call, keys []string) ([]*canonical.Tensor, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	c.Names, c.State = nil, nil
	return m.call(method, c, keys)
}

func (m *Module) call(method string, c Call, keys []string) ([]*canonical.Tensor, error) {
	if m.m == nil {
		return nil, errors.New("libtorch: the module is closed")
	}
	inputs := c.Inputs
	if len(c.Names) != 0 && len(c.Names) != len(inputs) {
		return nil, fmt.Errorf("libtorch: %d names for %d inputs", len(c.Names), len(inputs))
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
	cstrings := func(ss []string) **C.char {
		if len(ss) == 0 {
			return nil
		}
		p := (**C.char)(C.calloc(C.size_t(len(ss)), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
		bufs = append(bufs, unsafe.Pointer(p))
		for i, s := range ss {
			cs := C.CString(s)
			bufs = append(bufs, unsafe.Pointer(cs))
			unsafe.Slice(p, len(ss))[i] = cs
		}
		return p
	}
	names, state := cstrings(c.Names), cstrings(c.State)
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
		rc = C.lt_run(m.m, cm, cins, names, C.int(n), state, C.int(len(c.State)), C.int(c.Threads), &outs, &nOut, &cerr)
	} else {
		rc = C.lt_run_capture(m.m, cm, cins, C.int(n), C.int(c.Threads), cstrings(keys), C.int(len(keys)), &outs, &nOut, &cerr)
	}
	if rc != 0 {
		return nil, newError(m.path, takeErr(cerr))
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
