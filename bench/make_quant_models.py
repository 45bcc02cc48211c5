#!/usr/bin/python3
"""Make the dynamically quantized CNN of docs/speed.md (not kept in the
repository): a 1×3×1024×1024 image through six convolutions and a
classifier, each written as ONNX Runtime's dynamic quantization writes a
Conv or MatMul (DynamicQuantizeLinear on the float input, ConvInteger or
MatMulInteger with int8 weights, Cast to float, Mul by the product of the
scales, Add of the float bias), with random weights; as
OUT/quant_cnn_1024/model.onnx and test_data_set_0/input_0.pb.

Debian's Python (python3-onnx, python3-numpy):

    /usr/bin/python3 bench/make_quant_models.py /tmp/qmodels
    go run ./cmd/onnxconv bench /tmp/qmodels/quant_cnn_1024/model.onnx --threads 1 --runtime onnxruntime --reps 5

The script is deterministic.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    r = np.random.default_rng(45)
    nodes, inits = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def dyn_quant(x, p):
        nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [p + "_q", p + "_s", p + "_z"]))
        return p + "_q", p + "_s", p + "_z"

    def dequant(acc, s, wscale, bias, p):
        nodes.append(helper.make_node("Cast", [acc], [p + "_f"], to=TensorProto.FLOAT))
        nodes.append(helper.make_node("Mul", [s, const(p + "_ws", np.float32(wscale))], [p + "_scale"]))
        nodes.append(helper.make_node("Mul", [p + "_f", p + "_scale"], [p + "_m"]))
        nodes.append(helper.make_node("Add", [p + "_m", bias], [p + "_b"]))
        return p + "_b"

    def conv(x, cin, cout, k, stride, p):
        q, s, z = dyn_quant(x, p)
        w = const(p + "_w", r.integers(-127, 128, (cout, cin, k, k)).astype(np.int8))
        pad = k // 2
        nodes.append(helper.make_node("ConvInteger", [q, w, z], [p + "_acc"], strides=[stride, stride],
                                      pads=[pad] * 4, kernel_shape=[k, k]))
        wscale = 1.0 / (127 * np.sqrt(cin * k * k))
        b = const(p + "_bias", r.uniform(-0.1, 0.1, (cout, 1, 1)).astype(np.float32))
        y = dequant(p + "_acc", s, wscale, b, p)
        nodes.append(helper.make_node("Relu", [y], [p + "_relu"]))
        return p + "_relu"

    x = "image"
    for i, (cin, cout, k, stride) in enumerate([(3, 16, 3, 2), (16, 32, 3, 2), (32, 32, 3, 1), (32, 64, 3, 2),
                                                 (64, 64, 1, 1), (64, 128, 3, 2)]):
        x = conv(x, cin, cout, k, stride, "conv%d" % i)
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"]))
    q, s, z = dyn_quant("flat", "fc")
    w = const("fc_w", r.integers(-127, 128, (128, 10)).astype(np.int8))
    nodes.append(helper.make_node("MatMulInteger", [q, w, z], ["fc_acc"]))
    b = const("fc_bias", r.uniform(-0.1, 0.1, (10,)).astype(np.float32))
    y = dequant("fc_acc", s, 1.0 / (127 * np.sqrt(128)), b, "fc")
    nodes.append(helper.make_node("Identity", [y], ["logits"]))
    graph = helper.make_graph(nodes, "quant_cnn_1024",
                              [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 1024, 1024])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="bench/make_quant_models.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    d = os.path.join(out, "quant_cnn_1024")
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    img = r.uniform(0, 1, (1, 3, 1024, 1024)).astype(np.float32)
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(img, "image").SerializeToString())


if __name__ == "__main__":
    main()
