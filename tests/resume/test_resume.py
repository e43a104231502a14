"""h5pack.Loader resume: state_dict() / load_state_dict() continue an interrupted run exactly (images,
labels, indices, crop boxes, echoes), across epochs, with batch and sample echo and augmentation;
set_epoch(); the fingerprint (equal for other threads/cache/rank, different for another seed) and the
ValueError of a state dict saved with other settings. CPU."""
import atexit
import json
import os
import shutil
import sys
import tempfile
import unittest

try:
    import h5py
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover
    print(f"skipped: {e}")
    sys.exit(77)

import h5pack

N, C, H, W, K = 61, 3, 8, 6, 4
TMP = tempfile.mkdtemp(prefix="h5pack_resume_")
PATH = os.path.join(TMP, "resume.h5")


def write_file(path):
    rng = np.random.default_rng(5)
    # the latest format (what h5pack writes) checksums its metadata, so opening needs no forked probe:
    # test_fingerprint opens five readers at once, and under ASan a probe forked while another reader's
    # worker is inside the sanitizer's malloc can hang (seen once in a fresh-clone CI run: 'no progress
    # reading the file's metadata for 20 s'); the probe has tests of its own (chunksrc_probe)
    with h5py.File(path, "w", libver="latest") as f:
        f.create_dataset("images", data=rng.integers(0, 256, size=(N, C, H, W), dtype=np.uint8), chunks=(K, C, H, W))
        f.create_dataset("labels", data=(np.arange(N) * 3 % 10).astype(np.int64))
        f.attrs["h5pack_format_version"] = np.int32(1)


def make(**kw):
    kw.setdefault("device", "cpu")
    kw.setdefault("threads", 2)
    kw.setdefault("batch_size", 8)
    kw.setdefault("seed", 11)
    kw.setdefault("with_indices", True)
    kw.setdefault("copy", True)
    return h5pack.Loader(PATH, **kw)


def snap(batch, ld):
    images, labels, indices = batch
    return (images.clone(), labels.clone(), indices.clone(), ld.last_boxes.clone())


def same(a, b):
    return all(torch.equal(x, y) for x, y in zip(a, b))


CONFIGS = {
    "chunk": dict(order="chunk", window=3),
    "random-batch-echo-flip": dict(order="random", echo=2, flip=True),
    "sample-echo-rrc": dict(order="chunk", window=4, echo=3, echo_mode="sample", crop="random_resized",
                            output_size=(6, 5), flip=True),
    "sequential-drop-last-padding": dict(order="sequential", drop_last=True, crop_padding=2, flip=True),
}


class Resume(unittest.TestCase):
    def uninterrupted(self, kw, epochs):
        with make(**kw) as ld:
            return [[snap(b, ld) for b in ld] for _ in range(epochs)]

    def test_round_trip_at_many_positions(self):
        for name, kw in CONFIGS.items():
            full = self.uninterrupted(kw, 3)
            per_epoch = len(full[0])
            for epoch in range(2):
                for stop in sorted({1, 2, per_epoch // 2, per_epoch - 1}):
                    with self.subTest(config=name, epoch=epoch, stop=stop):
                        with make(**kw) as ld:
                            for _ in range(epoch):
                                for _ in ld:
                                    pass
                            for i, b in enumerate(ld):
                                self.assertTrue(same(snap(b, ld), full[epoch][i]))
                                if i + 1 == stop:
                                    break
                            sd = ld.state_dict()
                        sd = json.loads(json.dumps(sd))  # plain data, as saved in a checkpoint
                        self.assertEqual((sd["epoch"], sd["batch"] * ld._echo_factor + sd["echo"]), (epoch, stop))
                        with make(**kw, threads=1, cache="64M") as resumed:  # threads/cache may differ
                            resumed.load_state_dict(sd)
                            rest = [snap(b, resumed) for b in resumed]
                            self.assertEqual(len(rest), per_epoch - stop)
                            for got, want in zip(rest, full[epoch][stop:]):
                                self.assertTrue(same(got, want), "the rest of the interrupted epoch")
                            nxt = [snap(b, resumed) for b in resumed]
                            self.assertEqual(len(nxt), per_epoch)
                            for got, want in zip(nxt, full[epoch + 1]):
                                self.assertTrue(same(got, want), "the following epoch")
                            st = resumed.stats()
                            self.assertEqual(st["batches"], per_epoch - stop + per_epoch)

    def test_state_at_epoch_end_and_with_epochs_limit(self):
        with make(epochs=2) as ld:
            for _ in ld:
                pass
            sd = ld.state_dict()
            self.assertEqual((sd["epoch"], sd["batch"], sd["echo"]), (1, 0, 0))
            for _ in ld:
                pass
            done = ld.state_dict()
        with make(epochs=2) as ld:
            ld.load_state_dict(sd)
            self.assertEqual(len(list(ld)), len(ld))  # the last epoch
            self.assertEqual(list(ld), [])
            ld.load_state_dict(done)  # saved after the last epoch: nothing left
            self.assertEqual(list(ld), [])

    def test_set_epoch(self):
        full = self.uninterrupted({}, 4)
        with make() as ld:
            ld.set_epoch(3)
            self.assertTrue(all(same(snap(b, ld), w) for b, w in zip(ld, full[3])))
            self.assertEqual(ld.epoch, 4)
            ld.set_epoch(1)
            got = [snap(b, ld) for b in ld]
            self.assertEqual(len(got), len(full[1]))
            self.assertTrue(all(same(g, w) for g, w in zip(got, full[1])))
            # stats() count over both readers (the reopen used to restart them); stats_struct() is the current
            st, own = ld.stats(), ld.stats_struct()
            self.assertEqual((st["batches"], own.batches), (len(full[3]) + len(full[1]), len(full[1])))
            self.assertEqual(st["samples"], 2 * N)
            uses = st["chunk_hits"] + st["chunk_misses"]
            self.assertAlmostEqual(st["hit_rate"], st["chunk_hits"] / uses)
            self.assertGreater(st["elapsed_s"], own.elapsed_s)
        # the DistributedSampler loop after a resume: set_epoch(e) of the epoch resumed keeps the position
        with make() as ld:
            for i, _ in enumerate(ld):
                if i == 2:
                    break
            sd = ld.state_dict()
        with make() as ld:
            ld.load_state_dict(sd)
            ld.set_epoch(sd["epoch"])
            rest = [snap(b, ld) for b in ld]
            self.assertEqual(len(rest), len(full[0]) - 3)
            self.assertTrue(all(same(g, w) for g, w in zip(rest, full[0][3:])))
            with self.assertRaises(ValueError):
                ld.set_epoch(-1)

    def test_fingerprint(self):
        with make() as a, make(threads=1, cache="8M", prefetch=6) as b, make(world=2, rank=1) as c, \
                make(world=2, rank=0, threads=3) as d, make(seed=12) as e:
            self.assertRegex(a.fingerprint, r"^[0-9a-f]{16}$")
            self.assertEqual(a.fingerprint, b.fingerprint)
            self.assertEqual(c.fingerprint, d.fingerprint)  # ranks of one job
            self.assertEqual(a.fingerprint, c.fingerprint)  # another world: a checkpoint loads into any
            self.assertNotEqual(a.fingerprint, e.fingerprint)  # another seed
            self.assertEqual(int(a.fingerprint, 16), a.info["order_fingerprint"])

    def test_mismatch_raises(self):
        with make() as ld:
            next(iter(ld))
            sd = ld.state_dict()
        with make(seed=12, batch_size=7) as other:
            with self.assertRaises(ValueError) as cm:
                other.load_state_dict(sd)
            msg = str(cm.exception)
            self.assertIn("seed: saved 11, now 12", msg)
            self.assertNotIn("batch_size", msg.split(": the state dict")[1].split(". Resuming")[0])  # may differ
            # the loader still works where it was
            self.assertEqual(len(list(other)), len(other))
        with make() as ld:
            # out of the config fields' range (ctypes would wrap them silently), not ints
            for bad in ({}, dict(sd, version=99), dict(sd, batch=-1), dict(sd, echo=2**32), dict(sd, batch=2**64 + 3),
                        dict(sd, epoch=2**64), dict(sd, epoch=True), dict(sd, batch=1.0)):
                with self.assertRaises(ValueError):
                    ld.load_state_dict(bad)
            with self.assertRaises(ValueError):
                ld.set_epoch(10**30)
            self.assertEqual(ld.state_dict()["epoch"], 0)  # refused states leave the position alone
            with self.assertRaises(ValueError) as cm:  # an edited position: the check value tells
                ld.load_state_dict(dict(sd, batch=len(ld)))
            self.assertIn("edited", str(cm.exception))
            self.assertEqual(len(list(ld)), len(ld))  # the refused state left the loader usable

    def test_damaged_or_foreign_state(self):
        """Edited fields, another file's state, a newer or older format: ValueError naming why, and the
        loader goes on exactly where it was."""
        from h5pack import _resume

        full = self.uninterrupted({}, 1)[0]
        with make() as ld:
            for i, _ in enumerate(ld):
                if i == 1:
                    break
            sd = json.loads(json.dumps(ld.state_dict()))
        other_path = os.path.join(TMP, "other.h5")  # another file: 4 more images, the same geometry else
        with h5py.File(other_path, "w", libver="latest") as f:
            f.create_dataset("images", data=np.zeros((N + 4, C, H, W), np.uint8), chunks=(K, C, H, W))
        with h5pack.Loader(other_path, device="cpu", batch_size=8, seed=11, labels=None) as o:
            foreign = o.state_dict()

        def resigned(**fields):  # a state whose check value matches: what a newer h5pack would write
            d = dict(sd, **fields)
            d["check"] = _resume._check_value(d)
            return d

        edited = [dict(sd, **{k: v}) for k, v in (("epoch", 1), ("batch", 0), ("echo", 1), ("sample", 0),
                                                  ("global_batch", 16), ("world", 2), ("fingerprint", "0" * 16))]
        edited.append(dict(sd, file=dict(sd["file"], bytes=1)))
        cases = [(d, "edited") for d in edited] + [
            ({k: v for k, v in sd.items() if k != "check"}, "edited"),
            (foreign, "another file"), (resigned(file=dict(sd["file"], samples=N + 4)), "another file"),
            (resigned(version=3), "newer h5pack"), (resigned(version=1), "earlier h5pack"),
            (resigned(sample=N + 1), "outside"), (resigned(echo=1), "outside"),
            (resigned(global_batch=24), "not world x batch_size"), ([sd], "not an h5pack.Loader state"),
        ]
        with make() as ld:
            got = []
            for i, b in enumerate(ld):
                got.append(snap(b, ld))
                if i == 2:
                    break
            for bad, words in cases:
                with self.assertRaises(ValueError, msg=words) as cm:
                    ld.load_state_dict(bad)
                self.assertIn(words, str(cm.exception))
            ld.load_state_dict(sd)  # the good one still loads: the epoch from its batch 2
            rest = [snap(b, ld) for b in ld]
            self.assertTrue(all(same(g, w) for g, w in zip(got + rest[1:], full)))
        with make() as ld:  # refused states leave an iteration's position alone: the next for goes on
            it = iter(ld)
            first = snap(next(it), ld)
            del it
            with self.assertRaises(ValueError):
                ld.load_state_dict(resigned(version=3))
            self.assertEqual(ld.state_dict()["batch"], 1)
            self.assertTrue(same(first, full[0]))


if __name__ == "__main__":
    if not os.environ.get("H5PACK_KEEP_TEST_FILES"):  # unittest.main exits: clean up at exit
        atexit.register(shutil.rmtree, TMP, ignore_errors=True)
    write_file(PATH)
    unittest.main(verbosity=1)
