"""Writes the memory-initialisation corpus: an ImageFolder of every encoding the converter decodes, at
source sizes from 1 to about 300 pixels (odd, prime, non-square), for memcheck.py.

    make_corpus.py OUT_DIR

Run with /usr/bin/python3 (Debian's numpy and PIL). JPEG 4:4:0 and 4:1:1 (which PIL cannot write) and
YCCK come from libturbojpeg through ctypes. Exits 77 ("skipped: ...") when numpy, PIL or libturbojpeg
is missing. Prints the number of files written.
"""
import ctypes
import ctypes.util
import os
import struct
import sys
import zlib

try:
    import numpy as np
    from PIL import Image
except ImportError as e:
    print(f"skipped: {e} (install python3-numpy and python3-pil)")
    sys.exit(77)

# (width, height): 1 pixel, odd, prime, non-square, both orientations, around 100/200/300 (the repro).
SIZES = [(1, 1), (1, 9), (7, 1), (2, 3), (5, 4), (13, 17), (23, 37), (31, 29), (48, 64), (67, 101),
         (100, 100), (127, 131), (150, 97), (200, 200), (211, 149), (256, 255), (173, 300), (301, 293)]

# TurboJPEG (2.1 API): subsampling codes and pixel formats.
TJSAMP_444, TJSAMP_422, TJSAMP_420, TJSAMP_GRAY, TJSAMP_440, TJSAMP_411 = range(6)
TJPF_RGB, TJPF_CMYK = 0, 11
TJFLAG_PROGRESSIVE = 16384


def picture(w, h, seed):
    """Gradients plus noise: every DCT block and every filter tap has work to do."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    img = np.stack([255 * xx / max(w, 1), 255 * yy / max(h, 1), 128 + 100 * np.sin((xx + yy) / 7.0)], -1)
    img += rng.normal(0, 40, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


ADAM7 = [(0, 0, 8, 8), (0, 4, 8, 8), (4, 0, 8, 4), (0, 2, 4, 4), (2, 0, 4, 2), (0, 1, 2, 2), (1, 0, 2, 1)]


def png_raw(path, samples, color_type, interlace=False):
    """A PNG written with zlib alone, for what PIL cannot write (16-bit colour, Adam7 interlacing).
    samples: (h, w, spp) uint8 or uint16 array; filter 0 on every scanline."""
    h, w, _ = samples.shape
    be = samples.astype(">u2") if samples.dtype == np.uint16 else samples
    passes = [be[y0::dy, x0::dx] for y0, x0, dy, dx in ADAM7] if interlace else [be]
    raw = b"".join(b"\0" + row.tobytes() for sub in passes if sub.size for row in sub)

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    depth = 16 if samples.dtype == np.uint16 else 8
    ihdr = struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, 1 if interlace else 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def load_turbojpeg():
    name = ctypes.util.find_library("turbojpeg") or "libturbojpeg.so.0"
    try:
        tj = ctypes.CDLL(name)
    except OSError as e:
        print(f"skipped: cannot load libturbojpeg ({e})")
        sys.exit(77)
    tj.tjInitCompress.restype = ctypes.c_void_p
    tj.tjCompress2.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                               ctypes.c_int, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_ulong),
                               ctypes.c_int, ctypes.c_int, ctypes.c_int]
    tj.tjFree.argtypes = [ctypes.c_void_p]
    tj.tjDestroy.argtypes = [ctypes.c_void_p]
    return tj


def tj_write(tj, path, pixels, pf, subsamp, flags=0):
    h, w, c = pixels.shape
    handle = tj.tjInitCompress()
    buf, size = ctypes.c_void_p(), ctypes.c_ulong(0)
    data = np.ascontiguousarray(pixels).tobytes()
    if tj.tjCompress2(handle, data, w, w * c, h, pf, ctypes.byref(buf), ctypes.byref(size), subsamp, 90,
                      flags) != 0:
        raise RuntimeError(f"tjCompress2 failed for {path}")
    with open(path, "wb") as f:
        f.write(ctypes.string_at(buf, size.value))
    tj.tjFree(buf)
    tj.tjDestroy(handle)


def writers(tj):
    """name -> function(path_without_extension, rgb array) writing one encoding; returns the path."""
    def pil(ext, convert=None, **kw):
        def write(stem, rgb):
            im = Image.fromarray(rgb)
            im = convert(im, rgb) if convert else im
            im.save(stem + ext, **kw)
            return stem + ext
        return write

    def tjw(pf, subsamp, flags=0):
        def write(stem, rgb):
            px = rgb
            if pf == TJPF_CMYK:  # any 4 channels: TurboJPEG writes them as YCCK
                px = np.dstack([rgb, rgb[..., :1] // 2 + 100])
            tj_write(tj, stem + ".jpg", px, pf, subsamp, flags)
            return stem + ".jpg"
        return write

    def alpha(rgb):
        return (np.add.outer(np.arange(rgb.shape[0]), np.arange(rgb.shape[1])) * 37 % 256).astype(np.uint8)

    def png16(stem, rgb):
        v = rgb[..., 1].astype(np.uint16) * 257 + np.uint16(3)
        Image.frombytes("I;16", (rgb.shape[1], rgb.shape[0]), v.astype("<u2").tobytes()).save(stem + ".png")
        return stem + ".png"

    def raw(color_type, sixteen=False, interlace=False):
        def write(stem, rgb):
            px = np.dstack([rgb, alpha(rgb)]) if color_type == 6 else rgb
            px = px.astype(np.uint16) * 257 + np.uint16(5) if sixteen else px
            png_raw(stem + ".png", px, color_type, interlace)
            return stem + ".png"
        return write

    return {
        "jpeg444": pil(".jpg", quality=90, subsampling=0),
        "jpeg422": pil(".jpg", quality=90, subsampling=1),
        "jpeg420": pil(".jpg", quality=90, subsampling=2),
        "jpeg440": tjw(TJPF_RGB, TJSAMP_440),
        "jpeg411": tjw(TJPF_RGB, TJSAMP_411),
        "jpeggray": pil(".jpg", lambda im, rgb: im.convert("L"), quality=90),
        "jpegprog": pil(".jpg", quality=85, progressive=True),
        "jpegprog444": tjw(TJPF_RGB, TJSAMP_444, TJFLAG_PROGRESSIVE),
        "jpegcmyk": pil(".jpg", lambda im, rgb: im.convert("CMYK"), quality=90),
        "jpegycck": tjw(TJPF_CMYK, TJSAMP_444),
        "png8": pil(".png"),
        "png16gray": png16,
        "png16rgb": raw(2, sixteen=True),
        "png16rgba": raw(6, sixteen=True),
        "pnginterlaced": raw(2, interlace=True),
        "pnggray": pil(".png", lambda im, rgb: im.convert("L")),
        "pngpal": pil(".png", lambda im, rgb: im.convert("P", palette=Image.ADAPTIVE, colors=32)),
        "pngrgba": pil(".png", lambda im, rgb: Image.fromarray(np.dstack([rgb, alpha(rgb)]), "RGBA")),
        "pngla": pil(".png", lambda im, rgb: Image.fromarray(np.dstack([rgb[..., 0], alpha(rgb)]), "LA")),
    }


def main():
    out = sys.argv[1]
    tj = load_turbojpeg()
    count = 0
    # Each encoding gets every third size (shifted per encoding): all sizes meet every family of
    # encodings, and the corpus stays small enough for memcheck.
    for e, (name, write) in enumerate(sorted(writers(tj).items())):
        folder = os.path.join(out, name)
        os.makedirs(folder, exist_ok=True)
        for i, (w, h) in enumerate(SIZES):
            if (i + e) % 3 == 0 or (w, h) == (100, 100):
                write(os.path.join(folder, f"{w}x{h}"), picture(w, h, seed=1000 * e + i))
                count += 1
    print(f"{count} images in {len(writers(tj))} classes under {out}")


main()
