# Writes the JPEG 2000 test fixtures with PIL (OpenJPEG) and, beside each,
# the pixels PIL decodes from it (raw bytes, row-major, RGB or L).
# Run with Debian's python: /usr/bin/python3 make_fixtures.py
import io
import numpy as np
from PIL import Image

rng = np.random.default_rng(37)


def picture(w, h, mode):
    y, x = np.mgrid[0:h, 0:w]
    r = 128 + 100 * np.sin(x / 5.0) * np.cos(y / 7.0)
    g = (x * 255 // max(w - 1, 1) + y * 3) % 256
    b = 255 * ((x // 6 + y // 5) % 2)
    a = np.stack([r, g, b], -1) + rng.normal(0, 12, (h, w, 3))
    im = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8), "RGB")
    return im.convert(mode)


fixtures = {
    "rev_tiles_rpcl": (picture(48, 40, "RGB"), dict(irreversible=False, tile_size=(16, 16), num_resolutions=3, progression="RPCL")),
    "irr_layers_lrcp": (picture(40, 33, "RGB"), dict(irreversible=True, quality_mode="rates", quality_layers=[40, 10, 1], progression="LRCP")),
    "irr_tiles_pcrl": (picture(45, 31, "RGB"), dict(irreversible=True, tile_size=(32, 16), num_resolutions=4, progression="PCRL")),
    "gray_rev_cprl": (picture(37, 29, "L"), dict(irreversible=False, progression="CPRL")),
    "gray_irr_rlcp": (picture(33, 21, "L"), dict(irreversible=True, num_resolutions=2, progression="RLCP")),
    "j2k_rev": (picture(24, 20, "RGB"), dict(irreversible=False, no_jp2=True)),
    "precincts_rpcl": (picture(70, 50, "RGB"), dict(irreversible=False, precinct_size=(16, 16), codeblock_size=(8, 8), num_resolutions=3, progression="RPCL")),
    "precincts_pcrl": (picture(70, 50, "RGB"), dict(irreversible=True, precinct_size=(32, 16), codeblock_size=(8, 4), tile_size=(48, 40), num_resolutions=3, progression="PCRL")),
    "precincts_cprl": (picture(41, 37, "L"), dict(irreversible=True, precinct_size=(16, 16), num_resolutions=4, quality_mode="rates", quality_layers=[6, 1], progression="CPRL")),
    "precincts_lrcp": (picture(41, 37, "RGB"), dict(irreversible=False, precinct_size=(32, 16), num_resolutions=4, quality_mode="rates", quality_layers=[6, 1], progression="LRCP")),
    "precincts_rlcp": (picture(41, 37, "RGB"), dict(irreversible=True, precinct_size=(16, 16), codeblock_size=(16, 16), num_resolutions=3, quality_mode="rates", quality_layers=[9, 3], progression="RLCP")),
}
for name, (im, opts) in fixtures.items():
    buf = io.BytesIO()
    im.save(buf, "JPEG2000", **opts)
    ext = "j2k" if opts.get("no_jp2") else "jp2"
    open(f"{name}.{ext}", "wb").write(buf.getvalue())
    dec = Image.open(io.BytesIO(buf.getvalue()))
    dec = dec.convert("L" if im.mode == "L" else "RGB")
    open(f"{name}.pixels", "wb").write(np.asarray(dec).tobytes())
    print(name, len(buf.getvalue()), dec.size)
