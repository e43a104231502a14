"""h5pack.Loader over images of several sizes (format version 2, docs/format.md): crops drawn from each
image's own size. Files written with h5py as the format describes them, in the three ways the reader
reads the byte store (contiguous layout: pread or the map; chunked without filters, allocated as h5py
does: HDF5 reads; gzip), one image's place left as zeros between its neighbours (a skipped image). Random
resized crops equal PIL's antialiased bilinear resize of the same box of the image's own pixels, centre
crops torchvision's Resize + CenterCrop of it (mean <= 0.5 levels, max <= 2.5); boxes lie in each image's own bounds and reach past a square;
every image comes once per epoch with its label; the same seed gives the same batches; ranks, resume and
set_output_size work as for one size; the two-pass path
(echo, the CUDA backend) gives the one-pass path's bytes, batch and sample echo work; damaged tables give
errors; a file without a crop is refused with a message that names the options."""
import os
import sys
import tempfile
import unittest

import h5test

try:
    import h5py
    import numpy as np
    import torch
    from PIL import Image
except ImportError as e:  # pragma: no cover
    h5test.skip(f"{e}")

import h5pack

N, C = 30, 3
WORK = tempfile.mkdtemp(prefix="h5pack-ragged-")
IMAGES, SMOOTH = [], []


def make_images():
    """Shading with hard edges (the hard case for resampling), and the shading alone (photo-like)."""
    rng = np.random.default_rng(7)
    for i in range(N):
        h, w = int(rng.integers(40, 141)), int(rng.integers(40, 141))
        small = rng.integers(0, 256, size=(5, 7, C)).astype(np.uint8)
        base = np.asarray(Image.fromarray(small).resize((w, h), Image.BICUBIC), dtype=np.float64)
        yy, xx = np.mgrid[0:h, 0:w]
        edges = ((xx // 7 + yy // 11) % 2) * 50.0
        IMAGES.append(np.clip(base * 0.8 + edges[..., None], 0, 255).astype(np.uint8))
        SMOOTH.append(np.clip(base, 0, 255).astype(np.uint8))


def write(path, images=None, **store):
    """The documented layout; image 11's place is followed by a gap of zeros (a skipped image's bytes)."""
    images = IMAGES if images is None else images
    offsets, pos = [], 0
    for i, im in enumerate(images):
        offsets.append(pos)
        pos += im.size + (5000 if i == 11 else 0)
    data = np.zeros(pos, dtype=np.uint8)
    for off, im in zip(offsets, images):
        data[off:off + im.size] = im.ravel()
    with h5py.File(path, "w") as f:
        f.create_dataset("images", data=data, **store)
        f.create_dataset("image_offsets", data=np.array(offsets, dtype=np.int64))
        f.create_dataset("image_shapes", data=np.array([im.shape[:2] for im in images], dtype=np.int64))
        f.create_dataset("labels", data=(np.arange(N) % 4).astype(np.int64))
        f.attrs["h5pack_format_version"] = np.int32(2)
        f.attrs["storage"] = np.bytes_("ragged")
        f.attrs["channels"] = np.int32(C)
        f.attrs["chunk_bytes"] = np.int64(60000)  # a few images per reader chunk: several chunks
    return path


STORES = {"contiguous": {}, "chunked": {"chunks": (32768,)}, "gzip": {"chunks": (32768,), "compression": "gzip"}}


def loader(path, **kw):
    kw.setdefault("device", "cpu")
    kw.setdefault("threads", 2)
    kw.setdefault("batch_size", 7)
    kw.setdefault("norm", "none")
    kw.setdefault("with_indices", True)
    kw.setdefault("epochs", 1)
    return h5pack.Loader(path, **kw)


def pil_reference(row, box, size):
    y, x, h, w, flip = (int(v) for v in box)
    img = Image.fromarray(IMAGES[row]).crop((x, y, x + w, y + h)).resize((size[1], size[0]), Image.BILINEAR)
    out = np.asarray(img, dtype=np.float64)
    return out[:, ::-1] if flip else out


def resize_center_crop(image, size, out):
    """torchvision's Resize(size) (shorter side to size, longer int(size * long / short)) + CenterCrop(out),
    transcribed on PIL (torchvision is not needed)."""
    h, w = image.shape[:2]
    nh, nw = (size, int(size * w / h)) if h <= w else (int(size * h / w), size)
    r = np.asarray(Image.fromarray(image).resize((nw, nh), Image.BILINEAR), dtype=np.float64)
    y, x = int(round((nh - out) / 2.0)), int(round((nw - out) / 2.0))
    return r[y:y + out, x:x + out]


class SeveralSizes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        make_images()
        cls.paths = {k: write(os.path.join(WORK, f"{k}.h5"), **v) for k, v in STORES.items()}
        cls.smooth = write(os.path.join(WORK, "smooth.h5"), SMOOTH)

    def compare(self, path, **kw):
        diffs, seen, boxes = [], [], []
        with loader(path, **kw) as ld:
            for images, labels, indices in ld:
                size = tuple(images.shape[2:])
                for i in range(images.shape[0]):
                    row, box = int(indices[i]), ld.last_boxes[i]
                    h, w = IMAGES[row].shape[:2]
                    y, x, bh, bw = (int(v) for v in box[:4])
                    self.assertTrue(0 <= y and 0 <= x and y + bh <= h and x + bw <= w, f"box {box} in {h}x{w}")
                    self.assertEqual(int(labels[i]), row % 4)
                    got = images[i].permute(1, 2, 0).double().numpy() * 255.0
                    diffs.append(np.abs(got - pil_reference(row, box, size)).ravel())
                    seen.append(row)
                    boxes.append((h, w, bh, bw))
        d = np.concatenate(diffs)
        print(f"  {os.path.basename(path)} {kw}: vs PIL mean {d.mean():.4f} max {d.max():.4f} levels")
        self.assertLessEqual(d.mean(), 0.5)
        self.assertLessEqual(d.max(), 2.5)
        self.assertEqual(sorted(seen), list(range(N)), "every image once per epoch")
        return boxes

    def test_random_resized_every_store(self):
        for name, path in self.paths.items():
            boxes = self.compare(path, crop="random_resized", output_size=(48, 40), flip=True)
            # drawn from the whole image: some box is longer than the image's shorter side
            self.assertTrue(any(max(bh, bw) > min(h, w) for h, w, bh, bw in boxes), name)
        # gzip: every HDF5 chunk located at open, runs inflated by the workers (fast path); without
        # locating, H5Dread under HDF5's lock gives the same pixels
        self.assertEqual(h5pack.info(self.paths["gzip"])["fast_path"], 1)
        os.environ["H5PACK_NO_LOCATE"] = "1"
        try:
            self.assertEqual(h5pack.info(self.paths["gzip"])["fast_path"], 0)
            self.compare(self.paths["gzip"], crop="random_resized", output_size=(48, 40), flip=True)
        finally:
            del os.environ["H5PACK_NO_LOCATE"]

    def test_center(self):
        """torchvision's Resize(round(56 / 0.875)) + CenterCrop(56) on each image, in one resampling."""
        for images_list, path in ((IMAGES, self.paths["contiguous"]), (SMOOTH, self.smooth)):
            diffs = []
            with loader(path, crop="center", output_size=56) as ld:
                for images, _, indices in ld:
                    for i in range(images.shape[0]):
                        got = images[i].permute(1, 2, 0).double().numpy() * 255.0
                        diffs.append(np.abs(got - resize_center_crop(images_list[int(indices[i])], 64, 56)).ravel())
            d = np.concatenate(diffs)
            print(f"  {os.path.basename(path)}: centre crop vs Resize(64) + CenterCrop(56): mean {d.mean():.4f} "
                  f"max {d.max():.4f} levels")
            self.assertLessEqual(d.mean(), 0.5)
            self.assertLessEqual(d.max(), 2.5)

    def test_same_seed_same_batches(self):
        def run():
            with loader(self.paths["chunked"], crop="random_resized", output_size=32, seed=5) as ld:
                return torch.cat([x.clone() for x, _, _ in ld])
        self.assertTrue(torch.equal(run(), run()))

    def test_damaged_tables(self):
        """A damaged store or table gives an error that names it, never a crash."""
        def damaged(name, edit):
            path = write(os.path.join(WORK, f"bad_{name}.h5"))
            with h5py.File(path, "r+") as f:
                edit(f)
            return path

        def replace(f, name, data):
            del f[name]
            f.create_dataset(name, data=data)

        offs = lambda f: f["image_offsets"][:]
        cases = {
            "overlap": (lambda f: replace(f, "image_offsets", np.r_[offs(f)[:5], offs(f)[5:] - 10]), "overlaps"),
            "past_end": (lambda f: replace(f, "image_offsets", offs(f) + 10**6), "overlaps|ends past"),
            "zero_side": (lambda f: replace(f, "image_shapes", np.zeros((N, 2), np.int64)), "1..65535"),
            "rows": (lambda f: replace(f, "image_shapes", f["image_shapes"][:-1]), "rows"),
            "channels": (lambda f: f.attrs.__delitem__("channels"), "channels"),
            "store_2d": (lambda f: replace(f, "images", np.zeros((4, 4), np.uint8)), "1-D byte store"),
        }
        for name, (edit, words) in cases.items():
            with self.assertRaisesRegex(h5pack.H5packError, words, msg=name):
                loader(damaged(name, edit), crop="random_resized", output_size=32)

    def test_ranks_resume_and_output_size(self):
        """Two ranks cover every image once per epoch; a resume continues the very batches; set_output_size
        changes the size at the next epoch, boxes still from each image's own size."""
        path, kw = self.paths["contiguous"], dict(crop="random_resized", output_size=32, seed=3, order="random")
        rows = []
        for rank in (0, 1):
            with loader(path, rank=rank, world=2, **kw) as ld:
                rows += [int(i) for _, _, ix in ld for i in ix]
        self.assertEqual(sorted(rows), list(range(N)))
        with loader(path, epochs=2, **kw) as ld:
            whole = [x.clone() for e in range(2) for x, _, _ in ld]
        with loader(path, epochs=2, **kw) as ld:
            first = []
            for x, _, _ in ld:
                first.append(x.clone())
                if len(first) == 3:
                    break
            sd = ld.state_dict()
        with loader(path, epochs=2, **kw) as ld:
            ld.load_state_dict(sd)
            rest = [x.clone() for e in range(2) for x, _, _ in ld]
        self.assertTrue(all(torch.equal(a, b) for a, b in zip(whole, first + rest)) and
                        len(whole) == len(first + rest))
        with loader(path, epochs=2, crop="random_resized", output_size=32, max_output_size=56) as ld:
            for x, _, _ in ld:
                self.assertEqual(tuple(x.shape[2:]), (32, 32))
            ld.set_output_size(56)
            for x, _, ix in ld:
                self.assertEqual(tuple(x.shape[2:]), (56, 56))
                for i in range(x.shape[0]):
                    got = x[i].permute(1, 2, 0).double().numpy() * 255.0
                    ref = pil_reference(int(ix[i]), ld.last_boxes[i], (56, 56))
                    self.assertLessEqual(np.abs(got - ref).mean(), 0.5)

    def test_extreme_shapes(self):
        """A 1 x 20000 and a 20000 x 1 image: a batch place is the largest image, not the largest height x
        the largest width (4 GB here), so echo (the two-pass path) opens with little memory; h5pack.info
        describes such a file, and a tall file of one size too (its probe reader needs no crop there)."""
        shapes = [(1, 20000), (20000, 1), (30, 40)]
        data, offsets, pos = [], [], 0
        for h, w in shapes:
            offsets.append(pos)
            pos += h * w * C
            data.append(np.full(h * w * C, 7 * len(offsets), np.uint8))
        path = os.path.join(WORK, "extreme.h5")
        with h5py.File(path, "w") as f:
            f.create_dataset("images", data=np.concatenate(data))
            f.create_dataset("image_offsets", data=np.array(offsets, np.int64))
            f.create_dataset("image_shapes", data=np.array(shapes, np.int64))
            f.attrs["h5pack_format_version"], f.attrs["storage"] = np.int32(2), np.bytes_("ragged")
            f.attrs["channels"] = np.int32(C)
        for kw in ({}, dict(echo=2), dict(echo=2, echo_mode="sample")):
            with loader(path, crop="random_resized", output_size=224, batch_size=2, **kw) as ld:
                self.assertEqual(sum(x.shape[0] for x, _, _ in ld), 3 * kw.get("echo", 1), kw)
                self.assertLess(ld.info["pinned_bytes"], 64 << 20, kw)
        self.assertEqual(h5pack.info(path)["several_sizes"], 1)
        tall = os.path.join(WORK, "tall.h5")
        with h5py.File(tall, "w") as f:
            f.create_dataset("images", data=np.zeros((2, 1400, 16, C), np.uint8), chunks=(1, 1400, 16, C))
            f["images"].attrs["layout"] = np.bytes_("NHWC")
        self.assertEqual(h5pack.info(tall)["height"], 1400)

    def test_refusals(self):
        with self.assertRaisesRegex(ValueError, "several sizes.*output_size"):
            loader(self.paths["contiguous"])

    def test_two_pass_and_echo(self):
        """The two-pass path (uint8 batch, then the crops: what echo and the CUDA backend use) gives the
        one-pass path's bytes; batch and sample echo deliver crops of each image's own size."""
        def run(**kw):
            with loader(self.paths["contiguous"], crop="random_resized", output_size=32, seed=9, flip=True,
                        **kw) as ld:
                return [(x.clone(), ix.clone(), ld.last_boxes.clone()) for x, _, ix in ld]
        one = run()
        os.environ["H5PACK_TWO_PASS"] = "1"
        try:
            two = run()
        finally:
            del os.environ["H5PACK_TWO_PASS"]
        self.assertTrue(all(torch.equal(a[0], b[0]) and torch.equal(a[1], b[1]) for a, b in zip(one, two)))
        for mode in ("batch", "sample"):
            with loader(self.paths["chunked"], crop="random_resized", output_size=(40, 36), echo=2, echo_mode=mode,
                        epochs=2) as ld:
                rows = []
                for images, _, indices in ld:
                    for i in range(images.shape[0]):
                        row, box = int(indices[i]), ld.last_boxes[i]
                        h, w = IMAGES[row].shape[:2]
                        self.assertTrue(int(box[0]) + int(box[2]) <= h and int(box[1]) + int(box[3]) <= w)
                        got = images[i].permute(1, 2, 0).double().numpy() * 255.0
                        self.assertLessEqual(np.abs(got - pil_reference(row, box, (40, 36))).mean(), 0.5)
                        rows.append(row)
                self.assertEqual(sorted(rows), sorted(list(range(N)) * 2), mode)  # one epoch, echo 2


if __name__ == "__main__":
    unittest.main(verbosity=2)
