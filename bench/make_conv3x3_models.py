#!/usr/bin/python3
"""One-node 3x3 convolution models (Conv with bias + Relu) for comparing the
executor with ONNX Runtime per shape (docs/speed.md, "3x3 convolutions
against ONNX Runtime"). Not kept in the repository:

    /usr/bin/python3 bench/make_conv3x3_models.py /tmp/conv3
    /tmp/ocbench --models /tmp/conv3 --threads 1 --reps 50

Each OUT/NAME/model.onnx gets test_data_set_0 (input_0.pb, output_0.pb
computed by torch in float32). Random weights, fixed seeds.
"""

import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

# name: (cin, cout, plane, stride)
SHAPES = {
    "c64_64_56": (64, 64, 56, 1),
    "c64_192_56": (64, 192, 56, 1),
    "c128_128_28": (128, 128, 28, 1),
    "c96_128_28": (96, 128, 28, 1),
    "c256_256_14": (256, 256, 14, 1),
    "c512_512_7": (512, 512, 7, 1),
    "c128_128_56s2": (128, 128, 56, 2),
}


def make(out, name):
    cin, cout, hw, stride = SHAPES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    w = (rng.standard_normal((cout, cin, 3, 3)) / np.sqrt(9 * cin)).astype(np.float32)
    b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
    x = rng.standard_normal((1, cin, hw, hw)).astype(np.float32)
    y = torch.relu(torch.nn.functional.conv2d(
        torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b),
        stride=stride, padding=1)).numpy()
    conv = helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv",
                            kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[stride, stride])
    relu = helper.make_node("Relu", ["c"], ["y"], name="relu")
    g = helper.make_graph(
        [conv, relu], name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y.shape))],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(m, os.path.join(d, "model.onnx"))
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())


if __name__ == "__main__":
    out = sys.argv[1]
    for n in sys.argv[2:] or SHAPES:
        make(out, n)
