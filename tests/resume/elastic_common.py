"""What the elastic-resume tests share (test_elastic.py, elastic_ddp.py): the file (100,000 tiny images
written by h5py), the loader settings, a record of what a rank delivers, and the checks over the ranks'
records: global batches (each delivery of every rank, concatenated in rank order) and each sample once."""
import numpy as np

N, K = 100_000, 8  # 12,500 chunks of 8 images of 1 x 4 x 4
WINDOW = 100
# flips and pad-and-crop draws show in the pixels (float32, no normalisation): the hashes below see them
SETTINGS = dict(device="cpu", threads=1, seed=3, order="chunk", window=WINDOW, cache="4M", dtype="float32",
                norm="none", flip=True, crop_padding=1, with_indices=True, copy=True)


def write_file(path, n=N):
    import h5py

    rng = np.random.default_rng(7)
    with h5py.File(path, "w", libver="latest") as f:
        f.create_dataset("images", data=rng.integers(0, 256, size=(n, 1, 4, 4), dtype=np.uint8), chunks=(K, 1, 4, 4))
        f.create_dataset("labels", data=(np.arange(n) % 1000).astype(np.int64))


def sample_hashes(images, boxes):
    """One 64-bit number per sample of its pixels and its crop box (flip, offsets)."""
    pixels = np.ascontiguousarray(images, dtype=np.float32).reshape(len(images), -1).view(np.uint32)
    parts = np.concatenate([pixels.astype(np.uint64), np.asarray(boxes, dtype=np.int64).astype(np.uint64)], axis=1)
    weights = (np.arange(1, parts.shape[1] + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) | np.uint64(1)
    with np.errstate(over="ignore"):
        return (parts * weights).sum(axis=1, dtype=np.uint64)


def record(loader, to_epoch_end=True, limit=None, save_after=()):
    """Iterates the rest of the loader's current epoch (or LIMIT deliveries): per delivery the position it
    had (epoch, batch, echo), its file rows and sample hashes; and the state dicts saved right after the
    deliveries counted in SAVE_AFTER (1: after the first)."""
    positions, rows, hashes, states = [], [], [], {}
    it = iter(loader)
    while limit is None or len(rows) < limit:
        sd = loader.state_dict()
        try:
            images, _, idx = next(it)
        except StopIteration:
            break
        positions.append((sd["epoch"], sd["batch"], sd["echo"]))
        rows.append(np.asarray(idx, dtype=np.int64))
        hashes.append(sample_hashes(np.asarray(images), np.asarray(loader.last_boxes)))
        if len(rows) in save_after:
            states[len(rows)] = loader.state_dict()
    del it
    return {"positions": positions, "rows": rows, "hashes": hashes, "states": states}


def global_batches(ranks):
    """The ranks' records (in rank order) as global deliveries: (position, rows, hashes) each."""
    n = len(ranks[0]["rows"])
    assert all(len(r["rows"]) == n for r in ranks), [len(r["rows"]) for r in ranks]
    out = []
    for i in range(n):
        pos = ranks[0]["positions"][i]
        assert all(r["positions"][i] == pos for r in ranks), [r["positions"][i] for r in ranks]
        out.append((pos, np.concatenate([r["rows"][i] for r in ranks]),
                    np.concatenate([r["hashes"][i] for r in ranks])))
    return out


def real_count(pos, rows, batches_per_epoch, global_batch, n=N):
    """Samples of a global delivery that are not padding (the epoch's last batch holds the rest)."""
    return min(len(rows), n - pos[1] * global_batch) if pos[1] + 1 == batches_per_epoch else len(rows)


def same_global_batches(a, b, batches_per_epoch, global_batch):
    """None when the global deliveries A and B hold the same samples with the same draws in the same
    places (the padding of the last batch aside), else what differs first."""
    if len(a) != len(b):
        return f"{len(a)} vs {len(b)} deliveries"
    for (pa, ra, ha), (pb, rb, hb) in zip(a, b):
        if pa != pb:
            return f"position {pa} vs {pb}"
        n = real_count(pa, ra, batches_per_epoch, global_batch)
        if not (np.array_equal(ra[:n], rb[:n]) and np.array_equal(ha[:n], hb[:n])):
            return f"delivery {pa}: the global batches differ"
    return None


def each_once(deliveries, n=N, padding_allowed=0):
    """None when the fresh deliveries (echo 0) hold every sample 0 .. n-1, none more than once but for at
    most PADDING_ALLOWED repeats; else what is wrong."""
    counts = np.zeros(n, dtype=np.int64)
    for pos, rows, _ in deliveries:
        if pos[2] == 0:
            np.add.at(counts, rows, 1)
    missing, repeats = int((counts == 0).sum()), int(np.maximum(counts - 1, 0).sum())
    if missing or repeats > padding_allowed:
        return f"{missing} samples never delivered, {repeats} repeats (padding allows {padding_allowed})"
    return None
