#!/usr/bin/python3
"""Make the large benchmark models of docs/speed.md (not kept in the
repository): ResNet-50, MobileNet-v2, MobileNet-v3-small and a BERT-base-
sized transformer encoder exported by torch with random weights, each as
OUT/NAME/model.onnx with test_data_set_0 (input_0.pb, output_0.pb computed
by torch), through fixtures/models/make_models.py's make().

Debian's Python: apt-get install python3-torch python3-torchvision
python3-onnx python3-numpy, then

    /usr/bin/python3 bench/make_models.py /tmp/bigmodels
    go build -o /tmp/ocbench ./cmd/onnxconv-bench
    /tmp/ocbench --models /tmp/bigmodels --threads 1 --reps 10 --before
"""

import importlib.util
import os
import sys

import torch.nn as nn
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "make_models", os.path.join(HERE, "..", "fixtures", "models", "make_models.py"))
mm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mm)


def bn_random(ctor):
    def f():
        m = ctor()
        mm.randomize_batchnorm(m)
        return m
    return f


def encoder():
    layer = nn.TransformerEncoderLayer(
        d_model=768, nhead=12, dim_feedforward=3072, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False)


MODELS = [
    ("resnet50", bn_random(lambda: torchvision.models.resnet50()), (1, 3, 224, 224), 13, 11,
     "torchvision resnet50, random weights and BatchNorm statistics"),
    ("mobilenet_v2", bn_random(lambda: torchvision.models.mobilenet_v2()), (1, 3, 224, 224), 13, 12,
     "torchvision mobilenet_v2, random weights and BatchNorm statistics"),
    ("mobilenet_v3_small", bn_random(lambda: torchvision.models.mobilenet_v3_small()), (1, 3, 224, 224), 13, 13,
     "torchvision mobilenet_v3_small, random weights and BatchNorm statistics"),
    ("transformer_encoder_768", encoder, (1, 128, 768), 14, 14,
     "nn.TransformerEncoder: 4 x TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072), seq 128"),
]


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: make_models.py OUT_DIR")
    out = os.path.abspath(sys.argv[1])
    os.makedirs(out, exist_ok=True)
    mm.HERE = out
    mm.MAX_MODEL_BYTES = 1 << 31  # these models are not fixtures
    mm.torch.set_num_threads(1)
    for m in MODELS:
        r = mm.make(*m)
        print("%-26s opset %2d  %10d bytes  %s" % (r["name"], r["opset"], r["bytes"], r["out_stats"]))


if __name__ == "__main__":
    main()
