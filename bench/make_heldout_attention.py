#!/usr/bin/python3
"""Two held-out transformer models for issue 42 (docs/speed.md, "Sixth
wave"): the attention and normalization work is measured on them but not
tuned on them. Written to OUT/NAME/model.onnx with test_data_set_0 (torch's
outputs) through fixtures/models/make_models.py's make(), like
bench/make_family_models.py:

    /usr/bin/python3 bench/make_heldout_attention.py /tmp/heldout
    /tmp/ocbench --models /tmp/heldout --threads 1 --reps 20

- heldout_encoder_masked: nn.TransformerEncoder, 2 layers, d_model 192,
  6 heads, ff 768, sequence 48, a causal float mask and a key padding mask
  (the last 5 positions), opset 15.
- heldout_bert_block: a BERT-like block written out by hand: fused QKV
  Linear, per-head split, scaled QK^T plus an additive padding mask
  (B,1,1,S), Softmax, ·V, output Linear, residual + LayerNorm, FFN with
  GELU (tanh approximation), residual + LayerNorm; d 384, 12 heads,
  sequence 40, opset 16.
"""

import importlib.util
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "make_models", os.path.join(HERE, "..", "fixtures", "models", "make_models.py"))
mm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mm)


class MaskedEncoder(nn.Module):
    def __init__(self, d=192, heads=6, seq=48, pad=5):
        super().__init__()
        layer = nn.TransformerEncoderLayer(
            d_model=d, nhead=heads, dim_feedforward=4 * d, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        causal = torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        self.register_buffer("causal", causal)
        kpm = torch.zeros(1, seq, dtype=torch.bool)
        kpm[:, seq - pad:] = True
        self.register_buffer("kpm", kpm)

    def forward(self, x):
        return self.enc(x, mask=self.causal, src_key_padding_mask=self.kpm)


class BertBlock(nn.Module):
    def __init__(self, d=384, heads=12, seq=40, pad=7):
        super().__init__()
        self.h, self.dh = heads, d // heads
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d, eps=1e-12)
        self.ff1 = nn.Linear(d, 4 * d)
        self.ff2 = nn.Linear(4 * d, d)
        self.ln2 = nn.LayerNorm(d, eps=1e-12)
        m = torch.zeros(1, 1, 1, seq)
        m[..., seq - pad:] = -10000.0
        self.register_buffer("mask", m)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q = q.reshape(b, s, self.h, self.dh).transpose(1, 2)
        k = k.reshape(b, s, self.h, self.dh).transpose(1, 2)
        v = v.reshape(b, s, self.h, self.dh).transpose(1, 2)
        a = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + self.mask
        a = torch.matmul(torch.softmax(a, dim=-1), v)
        a = a.transpose(1, 2).reshape(b, s, d)
        x = self.ln1(x + self.o(a))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x), approximate="tanh")))


MODELS = [
    ("heldout_encoder_masked", MaskedEncoder, (1, 48, 192), 15, 41,
     "nn.TransformerEncoder 2x(d 192, 6 heads, ff 768), seq 48, causal + key padding masks"),
    ("heldout_bert_block", BertBlock, (1, 40, 384), 16, 42,
     "BERT-like block d 384, 12 heads, seq 40, additive padding mask, GELU(tanh)"),
]


def main():
    if len(sys.argv) < 2:
        raise SystemExit("usage: make_heldout_attention.py OUT [NAME...]")
    out, names = os.path.abspath(sys.argv[1]), sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    mm.HERE = out
    mm.MAX_MODEL_BYTES = 1 << 31
    mm.torch.set_num_threads(1)
    for name, ctor, shape, opset, seed, note in MODELS:
        if names and name not in names:
            continue
        r = mm.make(name, ctor, shape, opset, seed, note)
        print("%-24s opset %2d %9d bytes  %s  %s" % (
            r["name"], r["opset"], r["bytes"], r["out_stats"],
            " ".join("%s:%d" % kv for kv in r["ops"][:10])), flush=True)


if __name__ == "__main__":
    main()
