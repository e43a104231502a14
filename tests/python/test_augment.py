"""h5pack.Loader's augmentation on the CPU backend, against PIL and torchvision's rules: random resized crops
equal PIL's antialiased bilinear resize of the same box, centre crops torchvision's Resize + CenterCrop
(float32, norm none: mean absolute difference <= 0.5/255, max <= 2.5/255), flips mirror it; the same seed gives the same crops, another
epoch other crops; set_output_size switches the size at the next epoch; sample echo delivers every row
exactly echo times per epoch in different batches; argument errors. Run by ctest like test_loader.py."""
import sys
import tempfile
import unittest

import h5py
import numpy as np
import torch

import h5pack

try:
    from PIL import Image
except ImportError:  # pragma: no cover
    print("skipped: PIL is not installed")
    sys.exit(77)

N, H, W, C = 24, 96, 128, 3
PATH = None
STORED = None


def photo_like(seed):
    """Smooth shading plus sharp edges, like a photo: the hard case for resampling differences."""
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, size=(6, 8, C)).astype(np.uint8)
    base = np.asarray(Image.fromarray(small).resize((W, H), Image.BICUBIC), dtype=np.float64)
    yy, xx = np.mgrid[0:H, 0:W]
    edges = ((xx // 9 + yy // 13) % 2) * 60.0
    return np.clip(base * 0.75 + edges[..., None], 0, 255).astype(np.uint8)


def make_file(path):
    global STORED
    STORED = np.stack([photo_like(s) for s in range(N)])
    with h5py.File(path, "w") as f:
        d = f.create_dataset("images", data=STORED, chunks=(4, H, W, C))
        d.attrs["layout"] = np.bytes_("NHWC")
        f.create_dataset("labels", data=(np.arange(N) % 5).astype(np.int64))


def loader(**kw):
    kw.setdefault("device", "cpu")
    kw.setdefault("threads", 2)
    kw.setdefault("batch_size", 8)
    kw.setdefault("norm", "none")
    kw.setdefault("with_indices", True)
    return h5pack.Loader(PATH, **kw)


def pil_reference(row, box, size):
    """What torchvision's resized_crop on a PIL image (then hflip) gives: crop the box, resize BILINEAR."""
    y, x, h, w, flip = (int(v) for v in box)
    img = Image.fromarray(STORED[row]).crop((x, y, x + w, y + h)).resize((size[1], size[0]), Image.BILINEAR)
    out = np.asarray(img, dtype=np.float64)
    return out[:, ::-1] if flip else out


class AgainstPIL(unittest.TestCase):
    def compare(self, **kw):
        diffs, flips = [], 0
        with loader(epochs=1, **kw) as ld:
            for images, labels, indices in ld:
                size = tuple(images.shape[2:])
                for i in range(images.shape[0]):
                    box = ld.last_boxes[i]
                    flips += int(box[4])
                    got = images[i].permute(1, 2, 0).double().numpy() * 255.0
                    diffs.append(np.abs(got - pil_reference(int(indices[i]), box, size)).ravel())
        d = np.concatenate(diffs)
        print(f"  {kw}: vs PIL mean {d.mean():.4f} max {d.max():.4f} levels over {d.size} values")
        self.assertLessEqual(d.mean(), 0.5)
        self.assertLessEqual(d.max(), 2.5)
        return flips

    def test_random_resized_downscale(self):
        flips = self.compare(crop="random_resized", output_size=(48, 40), flip=True)
        self.assertTrue(0 < flips < N)

    def test_random_resized_upscale(self):
        self.compare(crop="random_resized", output_size=(112, 144), scale=(0.2, 0.6))

    def test_center(self):
        """torchvision's Resize(round(64 / 0.875) = 73) + CenterCrop(64): 96 x 128 resized to 73 x 97, the
        crop at (4, 16) of it, reported as the source region (5, 21, 84, 85) in whole pixels."""
        diffs = []
        with loader(epochs=1, crop="center", output_size=64) as ld:
            for images, _, indices in ld:
                boxes = ld.last_boxes
                self.assertTrue(bool((boxes[:, :4] == torch.tensor([5, 21, 84, 85], dtype=torch.int32)).all()))
                for i in range(images.shape[0]):
                    got = images[i].permute(1, 2, 0).double().numpy() * 255.0
                    r = np.asarray(Image.fromarray(STORED[int(indices[i])]).resize((97, 73), Image.BILINEAR),
                                   dtype=np.float64)
                    diffs.append(np.abs(got - r[4:68, 16:80]).ravel())
        d = np.concatenate(diffs)
        print(f"  centre crop vs Resize(73) + CenterCrop(64): mean {d.mean():.4f} max {d.max():.4f} levels")
        self.assertLessEqual(d.mean(), 0.5)
        self.assertLessEqual(d.max(), 2.5)

    def test_uint8_output(self):
        with loader(epochs=1, crop="random_resized", output_size=32, dtype="uint8", layout="nhwc") as ld:
            for images, _, indices in ld:
                self.assertEqual(images.dtype, torch.uint8)
                self.assertEqual(tuple(images.shape[1:]), (32, 32, C))
                for i in range(images.shape[0]):
                    ref = pil_reference(int(indices[i]), ld.last_boxes[i], (32, 32))
                    self.assertLessEqual(np.abs(images[i].double().numpy() - ref).max(), 2.0)


def run_boxes(epochs=2, seed=3, **kw):
    """{(epoch, row): box} and the concatenated images of EPOCHS epochs."""
    boxes, imgs = {}, []
    with loader(epochs=epochs, seed=seed, crop="random_resized", output_size=32, flip=True, **kw) as ld:
        for e in range(epochs):
            for images, _, indices in ld:
                imgs.append(images.clone())
                for i, row in enumerate(indices.tolist()):
                    boxes[(e, row)] = tuple(ld.last_boxes[i].tolist())
    return boxes, torch.cat(imgs)


class Draws(unittest.TestCase):
    def test_same_seed_same_crops_other_epoch_other_crops(self):
        a, ia = run_boxes()
        b, ib = run_boxes()
        self.assertEqual(a, b)
        self.assertTrue(torch.equal(ia, ib))
        moved = sum(a[(0, r)] != a[(1, r)] for r in range(N))
        self.assertGreaterEqual(moved, N - 2)
        c, _ = run_boxes(seed=4)
        self.assertNotEqual(a, c)

    def test_set_output_size_between_epochs(self):
        with loader(epochs=3, crop="random_resized", output_size=32, max_output_size=(64, 80)) as ld:
            for size in ((32, 32), (48, 80), (16, 24)):
                for images, _, _ in ld:
                    self.assertEqual(tuple(images.shape[2:]), size)
                if size != (16, 24):
                    ld.set_output_size((48, 80) if size == (32, 32) else (16, 24))
            with self.assertRaises(h5pack.H5packError) as cm:
                ld.set_output_size(65)
            self.assertIn("maximum output size", str(cm.exception))

    def test_set_output_size_survives_a_reopen(self):
        """A break (or a peek) makes the next for reopen the reader at the next epoch, as does set_epoch:
        the size asked for that epoch comes along."""
        with loader(crop="random_resized", output_size=32, max_output_size=(64, 80)) as ld:
            for size in ((48, 80), (16, 24), (40, 40)):
                ld.set_output_size(size)
                for k, (images, _, _) in enumerate(ld):
                    self.assertEqual(tuple(images.shape[2:]), size, f"batch {k} after set_output_size({size})")
                    if k == 1:
                        break  # mid-epoch: the next for reopens
            ld.set_output_size(24)
            ld.set_epoch(7)
            self.assertEqual(tuple(next(iter(ld))[0].shape[2:]), (24, 24), "set_epoch's reopen")

    def test_reopens_keep_the_maximum_and_later_sizes(self):
        """A smaller size carried into a reopen does not lower the maximum; a reopen back into an epoch
        opens with that epoch's size and gives the reader a size asked for a later epoch when it starts."""
        with loader(crop="random_resized", output_size=32) as ld:  # the maximum: 32, from output_size
            ld.set_output_size(16)
            for _k, _b in zip(range(2), ld):
                pass  # a break: the next for reopens at epoch 1 with 16
            self.assertEqual(tuple(next(iter(ld))[0].shape[2:]), (16, 16))
            ld.set_output_size(32)  # back up: still allowed after the reopen
        with loader(crop="random_resized", output_size=32, max_output_size=64) as ld:
            sizes = [{tuple(x.shape[2:]) for x, _, _ in ld}]  # epoch 0: 32
            ld.set_output_size(48)  # from epoch 1
            for _k, _b in zip(range(2), ld):
                pass
            ld.set_output_size(16)  # from epoch 2 (epoch 1 is under way)
            ld.set_epoch(1)  # back to epoch 1's start: 48 there, 16 from epoch 2
            for _ in range(2):
                sizes.append({tuple(x.shape[2:]) for x, _, _ in ld})
            self.assertEqual(sizes, [{(32, 32)}, {(48, 48)}, {(16, 16)}])


class SampleEcho(unittest.TestCase):
    def test_counts_and_spread(self):
        echo = 3
        with loader(epochs=2, echo=echo, echo_mode="sample", crop="random_resized", output_size=24, flip=True,
                    order="random") as ld:
            self.assertEqual(ld.info["echo_mode"], "sample")
            self.assertEqual(ld.info["echo_pool_bytes"], (echo - 1) * 8 * H * W * C)
            self.assertEqual(len(ld), 3 * echo)
            for _ in range(2):
                counts, batches_of = np.zeros(N, int), [set() for _ in range(N)]
                for b, (images, labels, indices) in enumerate(ld):
                    rows = indices.tolist()
                    self.assertEqual(len(set(rows)), len(rows))  # never twice in one batch
                    self.assertTrue(torch.equal(labels, indices % 5))
                    for r in rows:
                        counts[r] += 1
                        batches_of[r].add(b)
                self.assertTrue((counts == echo).all(), counts)
                self.assertTrue(all(len(s) == echo for s in batches_of))  # copies in different batches


class Arguments(unittest.TestCase):
    def test_bad_values(self):
        for kw in ({"crop": "bogus"}, {"output_size": 32}, {"crop": "center", "output_size": (-1, 4)},
                   {"crop": "center", "output_size": (4, 2**32)},
                   {"crop": "random_resized", "scale": (0.5, 0.1)}, {"echo_mode": "epoch"},
                   {"crop": "center", "center_ratio": 1.5},
                   {"crop": "center", "output_size": 32, "max_output_size": (32, 16)}):
            with self.assertRaises(ValueError, msg=str(kw)):
                loader(**kw)

    def test_with_indices_int64(self):
        with loader(epochs=1) as ld:
            images, labels, indices = next(iter(ld))
            self.assertEqual(indices.dtype, torch.int64)
        with loader(epochs=1, with_indices=False) as ld:
            self.assertEqual(len(next(iter(ld))), 2)


def main():
    global PATH
    with tempfile.TemporaryDirectory() as tmp:
        PATH = f"{tmp}/augment.h5"
        make_file(PATH)
        result = unittest.main(argv=[sys.argv[0], "-v"], exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
