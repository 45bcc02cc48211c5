#!/usr/bin/python3
"""Bench folders for one com.microsoft MatMulNBits node (docs/speed.md,
"Seventh wave: int4 GEMV"): the decode step's GEMV and a 4-row prefill
on LLM-sized weights, as model folders onnxconv-bench reads (model.onnx +
test_data_set_0; y computed in float64 from the dequantized weights).

    /usr/bin/python3 bench/make_nbits_gemv.py /tmp/nbits
    /tmp/ocbench --models /tmp/nbits --threads 1 --reps 50 --atol 1e-3

Folders: nbits{BITS}_{K}x{N}_b{BLOCK}_m{M} (packed uint8 zero points);
those ending in _acc4 have accuracy_level 4, where ONNX Runtime quantizes
A to int8 by blocks (amax/127, round half to even) and y is computed that
way (executor/kernels/nbits_int8.go).
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CASES = [(4, 2048, 2048, 32, 1), (4, 4096, 4096, 32, 1), (4, 4096, 4096, 128, 1), (8, 2048, 2048, 32, 1), (4, 2048, 2048, 32, 4),
         (4, 4096, 4096, 32, 1, 4), (4, 4096, 4096, 128, 1, 4), (4, 2048, 2048, 32, 4, 4), (8, 2048, 2048, 32, 1, 4),
         (4, 4096, 4096, 16, 1, 4)]


def quantize_a(a, block):
    """A quantized by blocks as ONNX Runtime does for accuracy_level 4:
    the int8 values and each block's scale."""
    m, k = a.shape
    blocks = a.reshape(m, k // block, block)
    amax = np.abs(blocks).max(axis=-1).astype(np.float32)
    scale = (amax / np.float32(127)).astype(np.float32)
    with np.errstate(divide="ignore"):
        inv = np.where(amax != 0, np.float32(127) / amax, np.float32(0)).astype(np.float32)
    q = np.rint((blocks * inv[:, :, None]).astype(np.float32))
    return q, scale


def make(root, bits, k, n, block, m, acc=0, seed=0):
    rng = np.random.default_rng(seed)
    blocks, blob, per = k // block, block * bits // 8, 8 // bits
    b = rng.integers(0, 256, size=(n, blocks, blob), dtype=np.uint8)
    s = rng.uniform(0.001, 0.02, size=(n * blocks,)).astype(np.float32)
    row_bytes = (blocks + per - 1) // per
    zp = rng.integers(0, 256, size=(n * row_bytes,), dtype=np.uint8)
    a = rng.standard_normal((m, k)).astype(np.float32)
    # dequantize: values low bits first within each byte
    vals = np.stack([(b >> (bits * j)) & ((1 << bits) - 1) for j in range(per)], axis=-1).reshape(n, blocks, block)
    zb = np.stack([(zp.reshape(n, row_bytes) >> (bits * j)) & ((1 << bits) - 1) for j in range(per)], axis=-1)
    z = zb.reshape(n, -1)[:, :blocks]
    w = (vals.astype(np.float64) - z[:, :, None]) * s.reshape(n, blocks)[:, :, None].astype(np.float64)
    if acc == 4:
        q, sa = quantize_a(a, block)
        qw = vals.astype(np.float64) - z[:, :, None]  # [n, blocks, block]
        y = np.einsum("mkb,nkb,mk,nk->mn", q.astype(np.float64), qw, sa.astype(np.float64),
                      s.reshape(n, blocks).astype(np.float64)).astype(np.float32)
    else:
        y = (a.astype(np.float64) @ w.reshape(n, k).T).astype(np.float32)
    node = helper.make_node("MatMulNBits", ["a", "b", "s", "zp"], ["y"], domain="com.microsoft", K=k, N=n, bits=bits, block_size=block,
                            accuracy_level=acc)
    g = helper.make_graph([node], "nbits", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
                          [numpy_helper.from_array(b, "b"), numpy_helper.from_array(s, "s"), numpy_helper.from_array(zp, "zp")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)], ir_version=9)
    folder = os.path.join(root, f"nbits{bits}_{k}x{n}_b{block}_m{m}" + ("_acc4" if acc == 4 else ""))
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    with open(os.path.join(folder, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(a, "a").SerializeToString())
    with open(os.path.join(folder, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())
    print(folder)


if __name__ == "__main__":
    for c in CASES:
        make(sys.argv[1], *c)
