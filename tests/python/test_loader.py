"""h5pack.Loader on the CPU: shapes and dtypes, every sample once per epoch, pixel values against h5py,
zero copy, the lifetime rule, echo, ranks, errors, stats and info. Run by ctest with PYTHONPATH=python and
H5PACK_LIBRARY pointing at the freshly built libh5pack.so."""
import math
import os
import sys
import tempfile
import unittest

import numpy as np
import torch

import files
import h5pack

F = {}


def loader(name="nchw", **kw):
    kw.setdefault("device", "cpu")
    kw.setdefault("threads", 2)
    kw.setdefault("batch_size", 8)
    return h5pack.Loader(F[name], **kw)


def epoch_rows(ld):
    """One epoch: (indices, labels, images) concatenated."""
    rows, labs, imgs = [], [], []
    for images, labels, indices in ld:
        rows.append(indices.clone())
        labs.append(labels.clone() if labels is not None else None)
        imgs.append(images.clone())
    return torch.cat(rows), labs, torch.cat(imgs)


class Shapes(unittest.TestCase):
    def test_shapes_dtypes_len(self):
        with loader() as ld:
            self.assertEqual(len(ld), math.ceil(files.N / 8))
            sizes = []
            for images, labels in ld:
                self.assertEqual(images.dtype, torch.float32)
                self.assertEqual(tuple(images.shape[1:]), (files.C, files.H, files.W))
                self.assertEqual(labels.dtype, torch.int64)
                self.assertEqual(labels.shape, (images.shape[0],))
                self.assertEqual(images.device.type, "cpu")
                sizes.append(images.shape[0])
            self.assertEqual(sizes, [8] * 6 + [2])

    def test_nhwc_output_and_drop_last(self):
        with loader(layout="nhwc", drop_last=True) as ld:
            shapes = [tuple(x.shape) for x, _ in ld]
            self.assertEqual(shapes, [(8, files.H, files.W, files.C)] * 6)

    def test_no_labels(self):
        with loader("nolabels") as ld:
            for images, labels in ld:
                self.assertIsNone(labels)
            self.assertFalse(ld.info["has_labels"])


class Coverage(unittest.TestCase):
    def check_orders(self, **kw):
        for order in ("sequential", "random", "chunk"):
            # a cache of 4 chunks: the chunk order needs an explicit window (its default is the whole file)
            with loader(order=order, return_indices=True, cache=4 * files.K * 3 * 8 * 6,
                        window=2 if order == "chunk" else None, **kw) as ld:
                for _ in range(2):
                    rows, labs, _ = epoch_rows(ld)
                    self.assertEqual(sorted(rows.tolist()), list(range(files.N)), order)
                    self.assertTrue(torch.equal(torch.cat(labs), torch.from_numpy(files.labels()[rows.numpy()])
                                                .long()), order)
                self.assertEqual(ld.epoch, 2)

    def test_each_sample_once_per_epoch(self):
        self.check_orders()

    def test_seed_changes_random_order(self):
        def first_epoch(seed):
            with loader(order="random", seed=seed, return_indices=True) as ld:
                return epoch_rows(ld)[0].tolist()
        self.assertEqual(first_epoch(3), first_epoch(3))
        self.assertNotEqual(first_epoch(3), first_epoch(4))

    def test_ranks_disjoint_and_complete(self):
        got = []
        for rank in range(2):
            with loader(order="chunk", rank=rank, world=2, return_indices=True) as ld:
                got.append(set(epoch_rows(ld)[0].tolist()))
        self.assertFalse(got[0] & got[1])
        self.assertEqual(got[0] | got[1], set(range(files.N)))

    def test_epochs_limit_and_break(self):
        with loader(epochs=2, order="sequential") as ld:
            it = iter(ld)
            next(it), next(it)
            del it  # break after 2 batches (epoch 0): the next for is all of epoch 1
            self.assertEqual(sum(1 for _ in ld), len(ld))
            self.assertEqual(ld.epoch, 2)
            self.assertEqual(sum(1 for _ in ld), 0)  # epochs=2: done

    def test_each_for_is_a_whole_epoch(self):
        """DataLoader's habit: a peek or a break does not make the next for start mid-epoch; epochs are
        whole and differently shuffled; load_state_dict still continues mid-epoch; two live iterators
        raise."""
        with loader(order="random", seed=3, with_indices=True, copy=True) as ld:
            peek = next(iter(ld))[2]
            epoch1 = torch.cat([i for _, _, i in ld])
            self.assertEqual(sorted(epoch1.tolist()), list(range(files.N)), "the for after a peek: a whole epoch")
            self.assertFalse(torch.equal(epoch1[: len(peek)], peek), "the for after a peek is the next epoch")
            it = iter(ld)
            next(it)
            state = ld.state_dict()  # mid-epoch 2, after its first batch
            rest = [i for _, _, i in it]
            ld.load_state_dict(state)
            again = torch.cat([i for _, _, i in ld])  # resumed: the rest of epoch 2 exactly
            self.assertTrue(torch.equal(again, torch.cat(rest)))
            with self.assertRaises(RuntimeError) as cm:
                list(zip(ld, ld))
            self.assertIn("one iteration at a time", str(cm.exception))


class Values(unittest.TestCase):
    def compare(self, name, expected, **kw):
        with loader(name, order="random", return_indices=True, **kw) as ld:
            rows, _, imgs = epoch_rows(ld)
        want = expected[rows.numpy()]
        np.testing.assert_allclose(imgs.numpy(), want, rtol=0, atol=2e-6)

    def test_imagenet_normalisation(self):
        self.compare("nchw", files.normalised(files.pixels()))

    def test_nhwc_input_gzip_and_custom_norm(self):
        self.compare("nhwc", files.normalised(files.pixels()))
        self.compare("gzip", files.normalised(files.pixels()))
        mean, std = np.array([0.5, 0.25, 0.1], np.float32), np.array([0.5, 0.2, 0.3], np.float32)
        self.compare("nchw", files.normalised(files.pixels(), mean, std), norm=(mean.tolist(), std.tolist()))

    def test_norm_of_one_value_is_every_channels(self):
        """norm=((m,), (s,)) normalises every channel as torchvision's Normalize does; a count that is
        neither 1 nor the file's channels is refused."""
        mean, std = np.full(3, 0.5, np.float32), np.full(3, 0.25, np.float32)
        self.compare("nchw", files.normalised(files.pixels(), mean, std), norm=((0.5,), (0.25,)))
        self.compare("nchw", files.normalised(files.pixels(), mean, std), norm=(0.5, 0.25))  # Normalize(0.5, 0.25)
        with self.assertRaises(ValueError) as cm:
            loader(norm=((0.5, 0.4), (0.2, 0.2)))
        self.assertIn("3 channels", str(cm.exception))

    def test_uint8_raw(self):
        with loader(dtype="uint8", order="sequential") as ld:
            images = torch.cat([x.clone() for x, _ in ld])
        self.assertEqual(images.dtype, torch.uint8)
        self.assertTrue(np.array_equal(images.numpy(), files.pixels()))


class ZeroCopy(unittest.TestCase):
    def test_tensor_points_at_batch(self):
        """Images are the reader's memory (no copy); labels and indices are copies of their own."""
        with loader(with_indices=True) as ld:
            for images, labels, indices in ld:
                b = ld._held[-1].batch
                self.assertEqual(images.data_ptr(), b.data)
                self.assertEqual(images.numel() * 4, b.bytes)
                self.assertNotEqual(labels.data_ptr(), b.labels)
                self.assertNotEqual(indices.data_ptr(), b.indices)
                self.assertEqual(images._base, None)  # no view: copy-on-hold can move it in place


class KeptBatches(unittest.TestCase):
    """What a user keeps stays right (copy-on-hold): every batch of an epoch kept as yielded equals a
    copy=True run; batches used after the with block; views of batches; list(loader)."""

    def reference(self, **kw):
        with loader(order="random", seed=4, with_indices=True, copy=True, **kw) as ld:
            return [tuple(t.clone() for t in batch) for batch in ld]

    def check_same(self, kept, want):
        self.assertEqual(len(kept), len(want))
        for k, ((x, y, i), (wx, wy, wi)) in enumerate(zip(kept, want)):
            self.assertTrue(torch.equal(i, wi), f"batch {k}: indices changed")
            self.assertTrue(torch.equal(y, wy), f"batch {k}: labels changed")
            self.assertTrue(torch.equal(x, wx), f"batch {k}: images changed")

    def test_keep_every_batch(self):
        want = self.reference()
        with loader(order="random", seed=4, with_indices=True) as ld:
            kept = [batch for batch in ld]  # the metric pattern: ys.append(y), outputs.append(x)
            self.check_same(kept, want)  # while the loader is open...
        self.check_same(kept, want)  # ...and after it closed
        with loader(order="random", seed=4, with_indices=True) as ld:
            listed = list(ld)
        self.assertEqual(len({x.data_ptr() for x, _, _ in listed}), len(listed), "list(loader): shared buffers")
        self.check_same(listed, want)

    def test_keep_only_an_early_batch(self):
        """The first batch kept for a look at the end, the others let go: the reader wants its buffer back
        when its turn in the ring comes, however few batches are held; it moves onto its own copy."""
        for prefetch in (4, 8):
            with loader(order="random", seed=4, with_indices=True, copy=True, batch_size=4) as ld:
                want = [tuple(t.clone() for t in batch) for batch in ld]
            with loader(order="random", seed=4, with_indices=True, batch_size=4, prefetch=prefetch) as ld:
                first, third, n = None, None, 0
                for n, batch in enumerate(ld, 1):
                    first = batch if first is None else first
                    third = batch if n == 3 else third
                self.assertEqual(n, len(want), f"prefetch={prefetch}: the whole epoch")
                self.check_same([first, third], [want[0], want[2]])
                self.assertEqual(ld._copies, 2)

    def test_use_after_with_block(self):
        want = self.reference()[0]
        with loader(order="random", seed=4, with_indices=True) as ld:
            x, y, i = next(iter(ld))
        self.assertTrue(torch.equal(x, want[0]) and torch.equal(y, want[1]) and torch.equal(i, want[2]))
        self.assertAlmostEqual(float(x.sum()), float(want[0].sum()), places=3)
        with self.assertRaises(h5pack.H5packError) as cm:  # a closed loader says so
            next(iter(ld))
        self.assertIn("closed", str(cm.exception))
        ld = loader(order="random", seed=4)
        it = iter(ld)
        next(it)
        ld.close()
        with self.assertRaises(h5pack.H5packError) as cm:  # and so does an iterator that outlived it
            next(it)
        self.assertIn("closed", str(cm.exception))

    def test_views_stay_right_or_raise(self):
        want = self.reference()
        with loader(order="random", seed=4, with_indices=True, prefetch=4) as ld:
            it = iter(ld)
            first = next(it)[0][1]  # a view of batch 0's images: its memory cannot be moved
            second = next(it)[0][2]
            whole = next(it)[0]     # the batch tensor itself: moved when its buffer is needed
            third = next(it)[0][3]
            self.assertTrue(torch.equal(first, want[0][0][1]) and torch.equal(third, want[3][0][3]))
            with self.assertRaises(RuntimeError) as cm:  # 4 buffers: 3 pinned by views leave none to fill
                next(it)
            self.assertIn(".clone()", str(cm.exception))
            del second
            rest = [b for _, b in zip(range(2), ld)]  # the view of batch 1 is gone: room again (a new for)
            self.assertEqual(len(rest), 2)
            self.assertTrue(torch.equal(first, want[0][0][1]) and torch.equal(whole, want[2][0]))
        self.assertTrue(torch.equal(first, want[0][0][1]), "a view kept past close()")
        del first  # the reader's memory is released now (deferred close)


class TorchHabits(unittest.TestCase):
    """torch dtypes, channels_last, DataLoader's habits refused with what to do instead, 0-255 norms."""

    def test_torch_dtypes(self):
        for dt in (torch.float16, torch.bfloat16, torch.float32, torch.uint8):
            with loader(dtype=dt, epochs=1) as ld:
                self.assertEqual(next(iter(ld))[0].dtype, dt)
        with self.assertRaises(ValueError):
            loader(dtype=torch.float64)

    def test_channels_last(self):
        with loader(order="sequential", copy=True) as ld:
            want = torch.cat([x for x, _ in ld])
        with loader(order="sequential", memory_format=torch.channels_last) as ld:
            got = [x for x, _ in ld]
        self.assertEqual(got[0].shape, want[: len(got[0])].shape)
        self.assertTrue(got[0].is_contiguous(memory_format=torch.channels_last) and not got[0].is_contiguous())
        self.assertTrue(torch.equal(torch.cat(got), want))
        with self.assertRaises(ValueError):
            loader(memory_format=torch.channels_last, layout="nhwc")

    def test_dataloader_habits(self):
        with loader() as ld:
            dl = torch.utils.data.DataLoader(ld, batch_size=None)
            with self.assertRaises(TypeError) as cm:
                next(iter(dl))
            self.assertIn("iterate it directly", str(cm.exception))
        for name, hint in (("num_workers", "threads="), ("shuffle", "order="), ("pin_memory", "device="),
                           ("transform", "crop=")):
            with self.assertRaises(TypeError) as cm:
                loader(**{name: 1})
            self.assertIn(hint, str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            loader(bogus=1)
        self.assertIn("'bogus'", str(cm.exception))

    def test_norm_in_255_units_refused(self):
        with self.assertRaises(ValueError) as cm:
            loader(norm=((123.675, 116.28, 103.53), (58.395, 57.12, 57.375)))
        self.assertIn("0.485", str(cm.exception))


class ZeroCopyMore(unittest.TestCase):

    def test_copy_true_owns_its_memory(self):
        with loader(copy=True, order="sequential") as ld:
            kept = [(x, y) for x, y in ld]
            self.assertEqual(len(ld._held), 0)
        want = files.normalised(files.pixels())  # reader closed: copies must still hold the data
        np.testing.assert_allclose(torch.cat([x for x, _ in kept]).numpy(), want, rtol=0, atol=2e-6)

    def test_keep_holds_batches(self):
        with loader(keep=3, prefetch=4) as ld:
            kept = []
            for i, b in enumerate(ld):  # every batch still referenced: held up to keep, then copied
                kept.append(b)
                self.assertEqual(len(ld._held), min(i + 1, 3))
            self.assertEqual(ld._copies, len(kept) - 3)

    def test_one_buffer(self):
        """prefetch=1 (the table's least): every batch goes back before the next, kept ones as copies."""
        with loader(prefetch=1, order="sequential") as ld:
            kept = [x for x, _ in ld]
            self.assertEqual((ld._keep, ld._copies), (1, len(kept) - 1))
        np.testing.assert_allclose(torch.cat(kept).numpy(), files.normalised(files.pixels()), rtol=0, atol=2e-6)
        with self.assertRaises(ValueError):
            loader(prefetch=1, keep=2)

    def test_plain_loop_copies_nothing(self):
        # `for x, y in loader` still binds the previous batch while the next is fetched: it is held, not
        # copied, and goes back once the loop rebinds x (the default keep is prefetch - 1)
        with loader(order="random") as ld:
            seen = 0
            for x, y in ld:
                seen += x.shape[0]
            self.assertEqual(seen, files.N)
            self.assertEqual(ld._copies, 0)
            for x, y in ld:
                del x, y
            self.assertEqual(ld._copies, 0)

    def test_exit_with_batches_held(self):
        """A script that ends with a loader never closed, its iterator alive, batches, a view and a
        second name still referenced exits cleanly (torch is half torn down by then: nothing is copied)."""
        script = ("import sys, h5pack\n"
                  "L = h5pack.Loader(sys.argv[1], batch_size=8, device='cpu', threads=2)\n"
                  "it = iter(L)\nx, y = next(it)\nx2, y2 = next(it)\nv = x2[0]\ng = x\n")
        import subprocess
        p = subprocess.run([sys.executable, "-c", script, F["nchw"]], capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, f"exit status {p.returncode}: {p.stderr[-2000:]}")
        # a loader left open at exit is closed then: its timeline's last partial interval is written
        with tempfile.TemporaryDirectory() as d:
            csv = os.path.join(d, "run.csv")
            script = ("import sys, h5pack\n"
                      "L = h5pack.Loader(sys.argv[1], batch_size=8, device='cpu', timeline=sys.argv[2],"
                      " timeline_interval=60)\n"
                      "n = sum(len(x) for x, _ in L)\n")
            p = subprocess.run([sys.executable, "-c", script, F["nchw"], csv], capture_output=True, text=True,
                               timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            with open(csv) as f:
                rows = f.read().splitlines()
            samples = sum(int(r.split(",")[4]) for r in rows[1:])
            self.assertEqual(samples, files.N, f"the timeline counts every sample: {rows}")

    def test_tensor_keeps_reader_alive(self):
        ld = loader(order="sequential")
        images, _ = next(iter(ld))
        before = images.clone()
        del ld  # the tensor's buffer references the loader: no close, memory stays valid
        self.assertTrue(torch.equal(images, before))


class EchoStats(unittest.TestCase):
    def test_echo_repeats_each_batch(self):
        with loader(echo=2, order="random", return_indices=True) as ld:
            self.assertEqual(len(ld), 2 * math.ceil(files.N / 8))
            seen = [idx.clone() for _, _, idx in ld]
            for a, b in zip(seen[0::2], seen[1::2]):
                self.assertTrue(torch.equal(a, b))
            st = ld.stats()
        self.assertEqual(st["batches_echoed"], st["batches_fresh"])
        self.assertEqual(st["samples"], 2 * files.N)

    def test_echo_with_copy_keeps_every_batch(self):
        # Echoes share their batch's buffers: keep > 1 is refused (test_bad_arguments), copy=True works.
        with loader(echo=2, keep=2, copy=True, order="sequential") as ld:
            kept = [x for x, _ in ld]
        self.assertEqual(len(kept), 2 * math.ceil(files.N / 8))
        want = files.normalised(files.pixels())
        np.testing.assert_allclose(torch.cat(kept[0::2]).numpy(), want, rtol=0, atol=2e-6)
        np.testing.assert_allclose(torch.cat(kept[1::2]).numpy(), want, rtol=0, atol=2e-6)

    def test_stats_dict(self):
        with loader() as ld:
            n = sum(x.shape[0] for x, _ in ld)
            st = ld.stats()
        self.assertEqual(st["samples"], n)
        self.assertEqual(st["batches"], len(ld))
        self.assertGreaterEqual(st["chunk_misses"], math.ceil(files.N / files.K))
        self.assertTrue(0.0 <= st["hit_rate"] <= 1.0 and 0.0 <= st["stall_fraction"] <= 1.0)

    def test_info(self):
        d = h5pack.info(F["nchw"])
        self.assertEqual((d["n_samples"], d["channels"], d["height"], d["width"]),
                         (files.N, files.C, files.H, files.W))
        self.assertEqual(d["samples_per_chunk"], files.K)
        self.assertEqual(d["n_chunks"], math.ceil(files.N / files.K))
        self.assertEqual(d["input_layout"], "nchw")
        self.assertTrue(d["has_labels"])
        self.assertEqual(h5pack.version(), h5pack.lib().h5pack_version_string().decode())
        # The file's stored mean/std, not the ImageNet default of a reader's normalisation.
        x = files.pixels().astype(np.float64) / 255
        np.testing.assert_allclose(d["mean"], x.mean(axis=(0, 2, 3)), rtol=0, atol=1e-6)
        np.testing.assert_allclose(d["std"], x.std(axis=(0, 2, 3)), rtol=0, atol=1e-6)

    def test_info_without_stored_mean_std(self):
        import h5py
        with tempfile.TemporaryDirectory() as tmp:
            path = f"{tmp}/foreign.h5"
            with h5py.File(path, "w") as f:  # an h5py script's file: no h5pack attributes
                f.create_dataset("images", data=files.pixels(), chunks=(files.K, files.C, files.H, files.W))
            d = h5pack.info(path)
        self.assertEqual(d["n_samples"], files.N)
        self.assertIsNone(d["mean"])
        self.assertIsNone(d["std"])


class Errors(unittest.TestCase):
    def test_missing_file(self):
        with self.assertRaises(h5pack.H5packError) as cm:
            h5pack.Loader(F["nchw"] + ".missing", device="cpu")
        self.assertLess(cm.exception.code, 0)
        self.assertEqual(str(cm.exception).count(F["nchw"] + ".missing"), 1, "the path, once")
        with self.assertRaises(h5pack.H5packError) as cm:  # an image folder where its packed file is meant
            h5pack.Loader(os.path.dirname(F["nchw"]), device="cpu")
        self.assertIn("h5pack --size", str(cm.exception))

    def test_wrong_dtype(self):
        with self.assertRaises(h5pack.H5packError) as cm:
            loader("float")
        self.assertIn("float.h5", str(cm.exception))
        with self.assertRaises(h5pack.H5packError):
            h5pack.info(F["float"])

    def test_bad_arguments(self):
        for kw in ({"order": "shuffled"}, {"dtype": "float64"}, {"cache": "lots"}, {"keep": 4},
                   {"keep": 2, "echo": 2},
                   {"device": "tpu"}, {"norm": ([0.5], [0.0])},
                   # outside the C field's range (ctypes wrapped them: echo=-2 was 4294967294 repeats)
                   {"echo": -2}, {"echo": 2**32 + 1}, {"epochs": -1}, {"seed": 2**64}, {"batch_size": 2.5},
                   {"batch_size": -1}, {"rank": -1}, {"window": -3}, {"crop_padding": -1}, {"echo": True},
                   {"prefetch": 0}, {"prefetch": 1025}, {"images": None},
                   # refused by the library (H5PACK_EINVAL): a ValueError too, naming the field
                   {"batch_size": 0}, {"world": 2, "rank": 2}, {"threads": 10**6}, {"cache": 0},
                   # uint8 without a crop is the stored pixels: a flip or padding would be ignored
                   {"dtype": "uint8", "flip": True}, {"dtype": "uint8", "crop_padding": 2}):
            with self.assertRaises(ValueError, msg=str(kw)) as cm:
                loader(**kw)
            name = next(iter(kw)) if "rank" not in kw else "rank"
            if name != "norm":  # the library's messages name the Loader's keywords (cache, not cache_bytes)
                self.assertIn(name, str(cm.exception), str(kw))

    def test_out_of_bounds_names_keyword_parameter_and_range(self):
        """A value outside the parameter table's bounds is refused before the library is called, with the
        keyword, the parameter and the table's range (the library's own words after the keyword)."""
        u64, u32 = 2**64 - 1, 2**32 - 1
        for kw, words in (
                ({"cache": 0}, f"cache=0: invalid configuration: cache_bytes must be 1 .. {u64}"),
                ({"flip": 2}, "flip=2: invalid configuration: random_flip must be 0 .. 1"),
                ({"echo": 0}, f"echo=0: invalid configuration: echo must be 1 .. {u32}"),
                # issue 41.6: epochs=0 once streamed without end; None is endless, 0 a mistake
                ({"epochs": 0}, f"epochs=0: invalid configuration: epochs must be 1 .. {u64}"),
                ({"order": "shuffled"}, "invalid configuration: order must be one of sequential/random/chunk"),
                ({"norm": "custom"}, "norm='custom': give the values instead, norm=(mean, std)"),  # not "none"
                ({"norm": "bogus"}, "norm must be one of imagenet/file/none or a (mean, std) pair"),
                ({"crop": "center", "output_size": (8, 65537)},
                 "output_size=(8, 65537): invalid configuration: output_width must be 0 .. 65536"),
                ({"timeline_interval": -1},
                 "timeline_interval=-1: invalid configuration: timeline_interval_s must be in [0, 86400]")):
            with self.assertRaises(ValueError, msg=str(kw)) as cm:
                loader(**kw)
            self.assertNotIsInstance(cm.exception, h5pack.H5packError, "refused before the library is called")
            self.assertIn(words, str(cm.exception))

    def test_values_in_the_parameters_own_unit(self):
        """What the table accepts, the keyword accepts in the parameter's own unit: 0/1 for flags, plain
        ints for byte counts, 0 for the table's "unset", enum names in any case; epochs=None is endless."""
        with loader(flip=1, drop_last=0, cache=1 << 20, device_memory_limit=0, window=0, epochs=None, threads=0,
                    order="SEQUENTIAL", center_ratio=0, patches_per_epoch=None) as ld:
            self.assertEqual((ld._cfg.random_flip, ld._cfg.cache_bytes, ld._cfg.order), (1, 1 << 20, 0))


    def test_input_layout(self):
        """(N,32,32,2) without a layout attribute: ambiguous; input_layout="nhwc" reads it as stored."""
        import h5py
        import numpy as np
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "ambiguous.h5")
            pixels = np.random.default_rng(3).integers(0, 256, (8, 32, 32, 2), dtype=np.uint8)
            with h5py.File(path, "w") as f:
                f.create_dataset("images", data=pixels)
            with self.assertRaises(h5pack.H5packError) as cm:
                h5pack.Loader(path, batch_size=8, device="cpu", epochs=1)
            self.assertIn("layout", str(cm.exception))
            with h5pack.Loader(path, batch_size=8, device="cpu", epochs=1, input_layout="nhwc", dtype="uint8",
                               order="sequential", labels=None) as ld:
                (images,) = [b if torch.is_tensor(b) else b[0] for b in ld]
                self.assertEqual(tuple(images.shape), (8, 2, 32, 32))
                self.assertTrue(torch.equal(images.cpu(), torch.from_numpy(pixels).permute(0, 3, 1, 2)))
            with self.assertRaises(ValueError):
                h5pack.Loader(path, input_layout="chw")
            with self.assertRaises(h5pack.H5packError):  # info() as the Loader: the shape leaves it open
                h5pack.info(path, labels=None)
            d = h5pack.info(path, labels=None, input_layout="nhwc")
            self.assertEqual((d["input_layout"], d["channels"], d["height"], d["width"]), ("nhwc", 2, 32, 32))

    def test_locked_file(self):
        """A file h5py holds open for writing: HDF5's lock, said as such (it read as 'corrupt')."""
        import h5py
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "locked.h5")
            with h5py.File(path, "w") as f:
                f.create_dataset("images", data=np.zeros((4, 3, 8, 8), np.uint8))
            with h5py.File(path, "a"):
                with self.assertRaises(h5pack.H5packError) as cm:
                    h5pack.info(path)
                self.assertIn("the file is locked", str(cm.exception))
                self.assertIn("HDF5_USE_FILE_LOCKING", str(cm.exception))
            self.assertEqual(h5pack.info(path)["n_samples"], 4)

    def test_library_search_skips_unusable_candidates(self):
        from h5pack import _lib
        real, orig = h5pack.lib().path_, _lib.library_candidates
        try:  # a missing file, then a library without the h5pack symbols (a stale or foreign one): skipped
            _lib.library_candidates = lambda: ["/nonexistent/libh5pack.so", "libc.so.6", real]
            self.assertEqual(_lib.load().path_, real)
            _lib.library_candidates = lambda: ["libc.so.6"]
            with self.assertRaises(ImportError) as cm:
                _lib.load()
            self.assertIn("libc.so.6", str(cm.exception))
        finally:
            _lib.library_candidates = orig

    def test_closed_loader(self):
        ld = loader()
        ld.close()
        ld.close()
        with self.assertRaises(h5pack.H5packError):
            iter(ld)
        # every call that needs the reader says so, and none reopens it (set_epoch to another epoch did)
        for call in (ld.stats, lambda: ld.set_epoch(0), lambda: ld.set_epoch(1), lambda: ld.set_output_size(8),
                     lambda: ld.load_state_dict(ld.state_dict())):
            with self.assertRaises(h5pack.H5packError) as cm:
                call()
            self.assertIn("the loader is closed", str(cm.exception))
        self.assertIsNone(ld._reader)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        F.update(files.make_all(tmp))
        print("libh5pack:", h5pack.lib().path_, h5pack.version(), "torch", torch.__version__)
        result = unittest.main(exit=False, verbosity=2).result
    return 0 if result.wasSuccessful() and result.testsRun > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
