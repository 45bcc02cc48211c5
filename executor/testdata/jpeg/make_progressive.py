# Writes progressive JPEG fixtures with PIL (libjpeg-turbo: its default
# progressive script, with successive-approximation refinement scans) and
# beside each the pixels PIL decodes (raw bytes, row-major RGB or L).
# Run with Debian's python: /usr/bin/python3 make_progressive.py
import io
import numpy as np
from PIL import Image

rng = np.random.default_rng(41)
y, x = np.mgrid[0:43, 0:57]
a = np.stack([128 + 90 * np.sin(x / 4.0) * np.cos(y / 6.0), (x * 4 + y * 3) % 256,
              255 * ((x // 7 + y // 5) % 2)], -1) + rng.normal(0, 15, (43, 57, 3))
rgb = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8), "RGB")
for name, im, opts in [
    ("progressive_420", rgb, dict(quality=85, progressive=True)),
    ("progressive_444_restart", rgb, dict(quality=93, progressive=True, subsampling=0, restart_marker_blocks=3)),
    ("progressive_gray", rgb.convert("L"), dict(quality=75, progressive=True)),
]:
    buf = io.BytesIO()
    im.save(buf, "JPEG", **opts)
    open(f"{name}.jpg", "wb").write(buf.getvalue())
    dec = Image.open(io.BytesIO(buf.getvalue())).convert(im.mode)
    open(f"{name}.pixels", "wb").write(np.asarray(dec).tobytes())
    print(name, len(buf.getvalue()), dec.size, dec.mode)
