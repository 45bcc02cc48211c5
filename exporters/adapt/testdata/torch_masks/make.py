#!/usr/bin/python3
"""Makes torch_masks: a torch model whose ONNX export (torch 1.13, opset 14) uses
operators ONNX Runtime's CPU kernels lack for their element types: Where on bool
(a mask selected from two masks), Relu and Max on int16. ONNX Runtime 1.30 refuses
the export as torch writes it; exporters/adapt's TestTorchMasksRunInORT adapts it to
onnxruntime-1.30 and checks ONNX Runtime's output against torch's.

Run with Debian's python3 (torch 1.13, onnx):  /usr/bin/python3 make.py
Writes model.onnx and test_data_set_0/{input_0,output_0}.pb (input standard normal,
default_rng(5); output computed by torch in float32).
"""
import os

import numpy as np
import onnx
import torch
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


class Masks(torch.nn.Module):
    def forward(self, x):
        a = x > 0
        b = x < 0.5
        keep = torch.where(a, b, ~b)  # Where on bool
        q = (x * 10).to(torch.int16)
        r = torch.relu(q)  # Relu on int16
        m = torch.maximum(q, torch.flip(q, [1]))  # Max on int16
        return keep.to(torch.float32) * x + r.to(torch.float32) + m.to(torch.float32)


def main():
    x = np.random.default_rng(5).standard_normal((2, 8)).astype(np.float32)
    model = Masks().eval()
    path = os.path.join(HERE, "model.onnx")
    torch.onnx.export(model, torch.from_numpy(x), path, opset_version=14,
                      input_names=["x"], output_names=["y"])
    y = model(torch.from_numpy(x)).detach().numpy()
    d = os.path.join(HERE, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    for name, arr, kind in (("x", x, "input"), ("y", y, "output")):
        with open(os.path.join(d, kind + "_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, name).SerializeToString())
    m = onnx.load(path)
    print([(n.op_type) for n in m.graph.node])


if __name__ == "__main__":
    main()
