"""Writes the converter benchmark's image folder: N JPEGs of WxH in 10 class folders, photo-like content.

Decode speed depends on content: flat images decode faster than photos, pure noise slower. Each image
here is a 1/f ("pink") random field, the power spectrum of natural photographs, in colours correlated
between channels, plus a few hard-edged discs and bars (object boundaries), then JPEG 4:2:0 at a quality
chosen so the files weigh about what real ones do (CelebA 218x178: ~8 KB; ImageNet 500x375: ~110 KB).
The same arguments give the same files.
Usage: /usr/bin/python3 make_images.py OUT_DIR N WxH [QUALITY=90] [SEED=0]"""
import os
import sys

import numpy as np
from PIL import Image, ImageDraw


def pink_field(rng, h, w, slope):
    """A random field with amplitude ~ 1/f^slope, scaled to [0, 1]."""
    fy = np.fft.fftfreq(h)[:, None]
    fx = np.fft.rfftfreq(w)[None, :]
    f = np.sqrt(fx * fx + fy * fy)
    f[0, 0] = 1.0
    spectrum = (rng.standard_normal((h, w // 2 + 1)) + 1j * rng.standard_normal((h, w // 2 + 1))) / f ** slope
    spectrum[0, 0] = 0
    field = np.fft.irfft2(spectrum, s=(h, w))
    field -= field.min()
    return field / max(field.max(), 1e-9)


def one_image(rng, w, h, label):
    base = rng.uniform(40, 215, 3) + 25 * np.array([np.cos(label), np.sin(label), np.cos(2 * label)])
    luma = pink_field(rng, h, w, 1.0)
    tint = np.stack([pink_field(rng, h, w, 1.4) for _ in range(2)])
    px = np.empty((h, w, 3))
    for c in range(3):
        mix = 0.5 * tint[c % 2] if c < 2 else 0.0
        px[..., c] = base[c] + 150 * (luma - 0.5) + 60 * (mix - 0.25)
    img = Image.fromarray(np.clip(px, 0, 255).astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(img)
    for _ in range(rng.integers(2, 6)):
        x, y = rng.integers(0, w), rng.integers(0, h)
        r = rng.integers(min(w, h) // 12, min(w, h) // 4)
        colour = tuple(int(v) for v in rng.integers(0, 256, 3))
        if rng.random() < 0.5:
            draw.ellipse((x - r, y - r, x + r, y + r), fill=colour)
        else:
            draw.rectangle((x - r, y - r // 3, x + r, y + r // 3), fill=colour)
    grain = rng.normal(0, 3, (h, w, 3))
    out = np.clip(np.asarray(img, dtype=np.float64) + grain, 0, 255).astype(np.uint8)
    return Image.fromarray(out, "RGB")


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    w, h = (int(v) for v in sys.argv[3].split("x"))
    quality = int(sys.argv[4]) if len(sys.argv) > 4 else 90
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    rng = np.random.default_rng(seed)
    classes = 10
    tmp = out + ".partial"
    for i in range(n):
        label = i % classes
        folder = os.path.join(tmp, f"class_{label:02d}")
        os.makedirs(folder, exist_ok=True)
        one_image(rng, w, h, label).save(os.path.join(folder, f"img_{i:06d}.jpg"), quality=quality, subsampling=2)
    os.rename(tmp, out)  # a folder under OUT's name is always complete
    print(f"wrote {n} JPEGs of {w}x{h} to {out}")


if __name__ == "__main__":
    main()
