"""h5pack.Loader on the GPU: device tensors handed over through __cuda_array_interface__ without a copy,
equal to the CPU backend's batches (float32 bit for bit), labels on the device; the device augmentation
(random resized and centre crops with flips, sample echo, a size change between epochs) equal to the CPU
backend's too, boxes included, also for images of several sizes. Exit 77 without a GPU."""
import sys
import tempfile

import torch

import files
import h5pack


def batches(path, device, **kw):
    out = []
    with h5pack.Loader(path, batch_size=8, order="random", seed=5, threads=2, device=device,
                       return_indices=True, **kw) as ld:
        for images, labels, indices in ld:
            if device != "cpu":
                b = ld._held[-1].batch
                assert images.is_cuda and labels.is_cuda, "GPU batch not on the device"
                assert images.data_ptr() == b.data, "GPU batch was copied"
                assert labels.data_ptr() != b.labels_device, "GPU labels are not the user's own copy"
            out.append((images.cpu().clone(), labels.cpu().clone(), indices.clone()))
        info = ld.info
    return out, info


def batches_on_side_stream(path):
    """The loop runs under another stream than the one current at open: the loader must make it wait for
    each batch (kernels on the side stream read finished data) and make the reader wait for it before a
    buffer is refilled."""
    side = torch.cuda.Stream()
    out = []
    with h5pack.Loader(path, batch_size=8, order="random", seed=5, threads=2, device="cuda",
                       return_indices=True) as ld:
        with torch.cuda.stream(side):
            for images, labels, indices in ld:
                doubled = images * 2  # a kernel queued on the side stream only
                out.append(((doubled / 2).cpu(), labels.cpu(), indices.clone()))
    return out


def augmented(path, device, **kw):
    """Two epochs: images, labels, indices and boxes of every delivery."""
    out = []
    with h5pack.Loader(path, batch_size=8, order="random", seed=9, threads=2, device=device, epochs=2,
                       return_indices=True, norm="imagenet", **kw) as ld:
        for _ in range(2):  # each for is one epoch
            for images, labels, indices in ld:
                out.append((images.cpu().clone(), labels.cpu().clone(), indices.clone(), ld.last_boxes.clone()))
    return out


def resized(path, device):
    """A centre crop whose size changes from the second epoch on (progressive resizing)."""
    out = []
    with h5pack.Loader(path, batch_size=8, order="sequential", threads=2, device=device, epochs=2,
                       crop="center", output_size=(6, 4), max_output_size=(8, 6), center_ratio=1.0) as ld:
        for _ in range(2):
            for images, labels in ld:
                if not out:
                    ld.set_output_size((8, 6))  # from epoch 1 on: batches prepared ahead are redone
                out.append(images.cpu().clone())
    return out


def check_augmentation(path):
    cases = [dict(crop="random_resized", output_size=(5, 4), flip=True),
             dict(crop="random_resized", output_size=(12, 9), scale=(0.3, 1.0), dtype="float16"),
             dict(crop="center", output_size=(6, 5), layout="nhwc", dtype="bfloat16"),
             dict(crop="random_resized", output_size=(6, 6), flip=True, echo=3, echo_mode="sample"),
             dict(echo=2, echo_mode="sample"),  # stored size: the streaming kernel gathering by address
             dict(echo=3, flip=True, dtype="bfloat16")]  # batch echo: two output buffers per slot on the GPU
    for kw in cases:
        gpu, cpu = augmented(path, "cuda", **kw), augmented(path, "cpu", **kw)
        assert len(gpu) == len(cpu) > 0, kw
        for k, ((gi, gl, gx, gb), (ci, cl, cx, cb)) in enumerate(zip(gpu, cpu)):
            assert torch.equal(gx, cx) and torch.equal(gl, cl), f"{kw}: order differs at delivery {k}"
            assert torch.equal(gb, cb), f"{kw}: crop boxes differ at delivery {k}"
            assert gi.dtype == ci.dtype and torch.equal(gi, ci), f"{kw}: GPU images differ at delivery {k}"
    g, c = resized(path, "cuda"), resized(path, "cpu")
    assert {tuple(x.shape[2:]) for x in g} == {(6, 4), (8, 6)}, "the size change did not happen"
    assert [x.shape for x in g] == [x.shape for x in c] and all(torch.equal(a, b) for a, b in zip(g, c)), \
        "a size change on the GPU differs from the CPU backend's"
    return len(cases)


def check_several_sizes(path):
    """Images of several sizes: each crop from the image's own size, on the GPU as on the CPU (boxes, bits),
    one-pass on the CPU against the GPU's two-pass path, with echo too."""
    cases = [dict(crop="random_resized", output_size=(7, 5), flip=True),
             dict(crop="center", output_size=(6, 6), dtype="float16"),
             dict(crop="random_resized", output_size=(5, 8), echo=2, echo_mode="sample"),
             dict(crop="random_resized", output_size=(4, 4), echo=2, flip=True, dtype="bfloat16")]
    for kw in cases:
        gpu, cpu = augmented(path, "cuda", **kw), augmented(path, "cpu", **kw)
        assert len(gpu) == len(cpu) > 0, kw
        for k, ((gi, gl, gx, gb), (ci, cl, cx, cb)) in enumerate(zip(gpu, cpu)):
            assert torch.equal(gx, cx) and torch.equal(gb, cb), f"several sizes {kw}: order or boxes differ at {k}"
            assert torch.equal(gi, ci), f"several sizes {kw}: GPU images differ at delivery {k}"
    return len(cases)


def kept_on_gpu(path):
    """Copy-on-hold on the GPU: every batch of an epoch kept as yielded (list) equals a copy=True run, also
    after the loader closed; channels_last gives the NCHW values with channels-last strides; a batch used
    after the with block keeps its values."""
    def run(**kw):
        with h5pack.Loader(path, batch_size=8, order="random", seed=7, threads=2, device="cuda",
                           return_indices=True, **kw) as ld:
            got = list(ld)
            torch.cuda.synchronize()
            return got
    want, kept = run(copy=True), run()
    assert len(kept) == len(want) > 1
    assert len({x.data_ptr() for x, _, _ in kept}) == len(kept), "kept GPU batches share buffers"
    for (x, y, i), (wx, wy, wi) in zip(kept, want):
        assert torch.equal(i, wi) and torch.equal(y, wy) and torch.equal(x, wx), "a kept GPU batch changed"
    cl = run(memory_format=torch.channels_last)
    for (x, _, _), (wx, _, _) in zip(cl, want):
        assert x.is_cuda and x.is_contiguous(memory_format=torch.channels_last) and torch.equal(x, wx)
    with h5pack.Loader(path, batch_size=8, order="random", seed=7, threads=2, device="cuda") as ld:
        x, y = next(iter(ld))
    assert torch.equal(x, want[0][0]) and torch.equal(y, want[0][1]), "a GPU batch used after close changed"
    return len(kept)


def main():
    if not torch.cuda.is_available():
        print("skipped: no GPU")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        path = files.write(tmp + "/nchw.h5")
        try:
            gpu, info = batches(path, "cuda")
        except h5pack.H5packError as e:
            if e.code == -8:  # ENODEV: this libh5pack was built without the CUDA backend
                print("skipped: libh5pack has no CUDA backend:", e)
                return 77
            raise
        cpu, _ = batches(path, "cpu")
        side = batches_on_side_stream(path)
        assert info["device"] == "cuda", info
        for dtype in ("float16", "bfloat16"):
            half, _ = batches(path, "cuda", dtype=dtype)
            assert half[0][0].dtype == getattr(torch, dtype)
        n_aug = check_augmentation(path)
        n_kept = kept_on_gpu(path)
        n_sizes = check_several_sizes(files.write_ragged(tmp + "/ragged.h5"))
    assert len(gpu) == len(cpu)
    for (gi, gl, gx), (ci, cl, cx) in zip(gpu, cpu):
        assert torch.equal(gx, cx) and torch.equal(gl, cl), "GPU and CPU orders differ"
        assert torch.equal(gi, ci), "GPU float32 batch differs from the CPU backend's"
    assert len(side) == len(cpu)
    for (si, sl, sx), (ci, cl, cx) in zip(side, cpu):
        assert torch.equal(sx, cx) and torch.equal(sl, cl), "side-stream order differs"
        assert torch.equal(si, ci), "a batch read on another stream differs from the CPU backend's"
    print(f"{len(gpu)} GPU batches equal the CPU backend's on {info['device_name']}, also read on a side stream; "
          f"{n_aug} device augmentation cases and a size change equal the CPU backend's; {n_kept} kept GPU "
          f"batches, channels_last and a batch used after close keep their values; {n_sizes} cases of images "
          f"of several sizes equal the CPU backend's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
