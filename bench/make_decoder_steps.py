#!/usr/bin/python3
"""Bench folders for the decoder fixtures of issue 39 (docs/speed.md,
"Sixth wave"): a prefill and a decode step with a KV cache as model
folders onnxconv-bench reads (model.onnx + test_data_set_0 with every
graph input and output, computed by torch).

    /usr/bin/python3 bench/make_decoder_steps.py /tmp/decoders
    /tmp/ocbench --models /tmp/decoders --threads 1 --reps 200

For each of fixtures/decoders/{llama,gpt2}: NAME_prefill (the 7-token
prompt of fixtures/decoders/make.py, an empty cache) and NAME_decode (one
token, the prefill's cache: past length 7). The torch modules are rebuilt
with make.py's seeds (the weights of the exported model.onnx; checked
against the logits make.py stored) and model.onnx is linked, not copied.
"""

import importlib.util
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DEC = os.path.join(HERE, "..", "fixtures", "decoders")
spec = importlib.util.spec_from_file_location("decoders_make", os.path.join(DEC, "make.py"))
dm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dm)


def write(folder, model_path, inputs, outputs):
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    link = os.path.join(folder, "model.onnx")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.abspath(model_path), link)
    g = onnx.load(model_path, load_external_data=False).graph
    init = {t.name for t in g.initializer}
    names = [i.name for i in g.input if i.name not in init]
    assert len(names) == len(inputs) and len(g.output) == len(outputs), (folder, names)
    for kind, arrs, vis in (("input", inputs, names), ("output", outputs, [o.name for o in g.output])):
        for k, (a, n) in enumerate(zip(arrs, vis)):
            with open(os.path.join(folder, "test_data_set_0", "%s_%d.pb" % (kind, k)), "wb") as f:
                f.write(numpy_helper.from_array(np.ascontiguousarray(a), n).SerializeToString())


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: make_decoder_steps.py OUT")
    out = os.path.abspath(sys.argv[1])
    torch.set_num_threads(1)
    for name, seed, ctor in (("llama", 0, dm.Llama), ("gpt2", 1, dm.GPT2)):
        torch.manual_seed(seed)
        model = ctor().eval()
        path = os.path.join(DEC, name, "model.onnx")
        step0 = os.path.join(DEC, name, "torch", "step0")
        ids = torch.from_numpy(np.load(os.path.join(step0, "input_ids.npy")))
        layers = len(model.layers) if hasattr(model, "layers") else len(model.blocks)
        past = [torch.zeros(1, model.cache_heads, 0, model.hd) for _ in range(2 * layers)]
        with torch.no_grad():
            s = ids.shape[1]
            mask, pos = torch.ones(1, s, dtype=torch.int64), torch.arange(s).unsqueeze(0)
            outs = model(ids, mask, pos, *past)
            want = np.load(os.path.join(step0, "logits.npy"))
            if not np.allclose(outs[0].numpy(), want, rtol=1e-5, atol=1e-6):
                raise SystemExit("%s: rebuilt module's logits differ from make.py's" % name)
            write(os.path.join(out, name + "_prefill"), path,
                  [t.numpy() for t in (ids, mask, pos, *past)], [t.numpy() for t in outs])
            nxt = outs[0][:, -1:].argmax(-1)
            mask2, pos2 = torch.ones(1, s + 1, dtype=torch.int64), torch.tensor([[s]])
            past2 = list(outs[1:])
            outs2 = model(nxt, mask2, pos2, *past2)
            want = np.load(os.path.join(DEC, name, "torch", "step1", "logits.npy"))
            if not np.allclose(outs2[0].numpy(), want, rtol=1e-5, atol=1e-6):
                raise SystemExit("%s: rebuilt module's decode logits differ from make.py's" % name)
            write(os.path.join(out, name + "_decode"), path,
                  [t.numpy() for t in (nxt, mask2, pos2, *past2)], [t.numpy() for t in outs2])
        print(name, "prefill", tuple(ids.shape), "decode past", tuple(past2[0].shape), flush=True)


if __name__ == "__main__":
    main()
