#!/usr/bin/python3
"""Make one model of each architecture family of docs/speed.md ("Families")
for the executor / ONNX Runtime benchmark. Not kept in the repository (up
to 100 MB each): written to the folder named by $ONNXCONV_FAMILY_MODELS
(or the argument), one OUT/NAME/model.onnx with test_data_set_0
(input_0.pb, output_0.pb computed by torch) each, through
fixtures/models/make_models.py's make().

Random weights and BatchNorm statistics, fixed seeds; Debian's Python
(python3-torch 1.13, python3-torchvision 0.14, python3-onnx):

    ONNXCONV_FAMILY_MODELS=/tmp/family /usr/bin/python3 bench/make_family_models.py [NAME...]
    go build -o /tmp/ocbench ./cmd/onnxconv-bench
    /tmp/ocbench --models /tmp/family --threads 1 --reps 10

"zoo" models are exported the way the ONNX model zoo's were: BatchNorm
kept as BatchNormalization nodes (not folded into the convolutions;
torch.onnx.TrainingMode.PRESERVE on a module in eval mode skips the
exporter's Conv+BN fusion) and no constant folding.
"""

import importlib.util
import io
import os
import sys

import onnx
import torch
import torch.nn as nn
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "make_models", os.path.join(HERE, "..", "fixtures", "models", "make_models.py"))
mm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mm)

ENV = "ONNXCONV_FAMILY_MODELS"


def bn_random(ctor):
    def f():
        m = ctor()
        mm.randomize_batchnorm(m)
        return m
    return f


def export_zoo(module, x, opset, input_names, output_names):
    buf = io.BytesIO()
    torch.onnx.export(
        module, (x,), buf,
        export_params=True,
        opset_version=min(opset, mm.EXPORT_MAX_OPSET),
        do_constant_folding=False,
        training=torch.onnx.TrainingMode.PRESERVE,
        input_names=input_names,
        output_names=output_names,
    )
    return onnx.load_from_string(buf.getvalue())


class UNet(nn.Module):
    """A small 2-level U-Net: InstanceNorm, ConvTranspose up-sampling,
    skip connections by Concat."""

    def __init__(self, c=16):
        super().__init__()

        def block(i, o):
            return nn.Sequential(
                nn.Conv2d(i, o, 3, padding=1), nn.InstanceNorm2d(o, affine=True), nn.ReLU(),
                nn.Conv2d(o, o, 3, padding=1), nn.InstanceNorm2d(o, affine=True), nn.ReLU())
        self.e1, self.e2, self.e3 = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
        self.pool = nn.MaxPool2d(2)
        self.u2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.d2 = block(4 * c, 2 * c)
        self.u1 = nn.ConvTranspose2d(2 * c, c, 2, stride=2)
        self.d1 = block(2 * c, c)
        self.out = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(self.pool(a))
        m = self.e3(self.pool(b))
        y = self.d2(torch.cat([self.u2(m), b], 1))
        y = self.d1(torch.cat([self.u1(y), a], 1))
        return self.out(y)


class UNetResize(nn.Module):
    """A 3-level U-Net of the held-out kind: BatchNorm, ConvTranspose 2x2
    stride 2 on the deep level, Resize (bilinear and nearest) on the
    others, skip Concats."""

    def __init__(self, c=16):
        super().__init__()

        def block(i, o):
            return nn.Sequential(
                nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(),
                nn.Conv2d(o, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU())
        self.e1, self.e2 = block(3, c), block(c, 2 * c)
        self.e3, self.e4 = block(2 * c, 4 * c), block(4 * c, 8 * c)
        self.pool = nn.MaxPool2d(2)
        self.u3 = nn.ConvTranspose2d(8 * c, 4 * c, 2, stride=2)
        self.d3 = block(8 * c, 4 * c)
        self.r2 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.d2 = block(6 * c, 2 * c)
        self.r1 = nn.Upsample(scale_factor=2, mode="nearest")
        self.d1 = block(3 * c, c)
        self.out = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(self.pool(a))
        m = self.e3(self.pool(b))
        z = self.e4(self.pool(m))
        y = self.d3(torch.cat([self.u3(z), m], 1))
        y = self.d2(torch.cat([self.r2(y), b], 1))
        y = self.d1(torch.cat([self.r1(y), a], 1))
        return self.out(y)


class BiLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(64, 128, num_layers=2, bidirectional=True)
        self.fc = nn.Linear(256, 10)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.fc(y)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(256, 8, batch_first=True)
        self.norm = nn.LayerNorm(256)

    def forward(self, x):
        y, _ = self.mha(x, x, x, need_weights=False)
        return self.norm(x + y)


def encoder():
    layer = nn.TransformerEncoderLayer(
        d_model=256, nhead=8, dim_feedforward=1024, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False)


tv = torchvision.models
IMG = (1, 3, 224, 224)
# name, constructor, input shape, opset, seed, note, zoo export
MODELS = [
    ("googlenet", bn_random(lambda: tv.googlenet(aux_logits=False, init_weights=True)), IMG, 13, 21,
     "torchvision googlenet (Inception v1 with BatchNorm)", False),
    ("densenet121", bn_random(lambda: tv.densenet121()), IMG, 13, 22,
     "torchvision densenet121 (pre-activation BatchNorm+ReLU, Concat growth)", False),
    ("mnasnet0_5", bn_random(lambda: tv.mnasnet0_5()), IMG, 13, 23, "torchvision mnasnet0_5", False),
    ("shufflenet_v2", bn_random(lambda: tv.shufflenet_v2_x1_0()), IMG, 13, 24,
     "torchvision shufflenet_v2_x1_0", False),
    ("unet", UNet, (1, 3, 128, 128), 13, 25, "2-level U-Net, 16 base channels, 128x128", False),
    ("unet_resize", bn_random(UNetResize), (1, 3, 128, 128), 13, 33,
     "3-level U-Net: ConvTranspose 2x2 stride 2, bilinear and nearest Resize, skip Concats, 128x128", False),
    ("bilstm", BiLSTM, (32, 1, 64), 13, 26, "2-layer bidirectional LSTM 64->128, seq 32, + Linear", False),
    ("resnet50_zoo", bn_random(lambda: tv.resnet50()), IMG, 13, 27,
     "torchvision resnet50, BatchNorm kept (ONNX zoo style)", True),
    ("mobilenet_v3_small", bn_random(lambda: tv.mobilenet_v3_small()), IMG, 13, 28,
     "torchvision mobilenet_v3_small", False),
    ("squeezenet1_0", lambda: tv.squeezenet1_0(), IMG, 13, 29, "torchvision squeezenet1_0", False),
    ("squeezenet1_1", lambda: tv.squeezenet1_1(), IMG, 13, 30, "torchvision squeezenet1_1", False),
    ("transformer_encoder_256", encoder, (1, 64, 256), 14, 31,
     "nn.TransformerEncoder: 4 layers, d_model 256, 8 heads, ff 1024, seq 64", False),
    ("attention_block", Attention, (1, 64, 256), 14, 32,
     "nn.MultiheadAttention(256, 8) + residual + LayerNorm, seq 64", False),
]

# Held out (issue 42): CNNs the convolution work was not tuned on, made only
# when named: make_family_models.py /tmp/heldout mobilenet_v2 regnet_x_400mf efficientnet_b0
HELDOUT = [
    ("mobilenet_v2", bn_random(lambda: tv.mobilenet_v2()), IMG, 13, 41, "torchvision mobilenet_v2", False),
    ("regnet_x_400mf", bn_random(lambda: tv.regnet_x_400mf()), IMG, 13, 42,
     "torchvision regnet_x_400mf (grouped 3x3 convolutions)", False),
    ("efficientnet_b0", bn_random(lambda: tv.efficientnet_b0()), IMG, 13, 43,
     "torchvision efficientnet_b0 (depthwise 3x3/5x5, SiLU, SE blocks)", False),
]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 and os.path.sep in sys.argv[1] else os.environ.get(ENV)
    if not out:
        raise SystemExit("usage: %s=DIR make_family_models.py [NAME...] (or make_family_models.py /DIR [NAME...])" % ENV)
    names = [a for a in sys.argv[1:] if a != out]
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    mm.HERE = out
    mm.MAX_MODEL_BYTES = 1 << 31  # these models are not fixtures
    mm.torch.set_num_threads(1)
    plain = mm.export
    for name, ctor, shape, opset, seed, note, zoo in MODELS + HELDOUT:
        held_out = any(h[0] == name for h in HELDOUT)
        if name not in names and (names or held_out):
            continue
        mm.export = export_zoo if zoo else plain
        r = mm.make(name, ctor, shape, opset, seed, note)
        print("%-26s opset %2d  %10d bytes  %s  %s" % (
            r["name"], r["opset"], r["bytes"], r["out_stats"],
            " ".join("%s:%d" % kv for kv in r["ops"][:8])), flush=True)


if __name__ == "__main__":
    main()
