"""h5pack.Loader on the GPU: device tensors handed over through __cuda_array_interface__ without a copy,
equal to the CPU backend's batches (float32 bit for bit), labels on the device. Exit 77 without a GPU."""
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
                b = ld._held[-1]
                assert images.is_cuda and labels.is_cuda, "GPU batch not on the device"
                assert images.data_ptr() == b.data, "GPU batch was copied"
                assert labels.data_ptr() == b.labels_device, "GPU labels were copied"
            out.append((images.cpu(), labels.cpu(), indices.clone()))
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
    assert len(gpu) == len(cpu)
    for (gi, gl, gx), (ci, cl, cx) in zip(gpu, cpu):
        assert torch.equal(gx, cx) and torch.equal(gl, cl), "GPU and CPU orders differ"
        assert torch.equal(gi, ci), "GPU float32 batch differs from the CPU backend's"
    assert len(side) == len(cpu)
    for (si, sl, sx), (ci, cl, cx) in zip(side, cpu):
        assert torch.equal(sx, cx) and torch.equal(sl, cl), "side-stream order differs"
        assert torch.equal(si, ci), "a batch read on another stream differs from the CPU backend's"
    print(f"{len(gpu)} GPU batches equal the CPU backend's on {info['device_name']}, also read on a side stream")
    return 0


if __name__ == "__main__":
    sys.exit(main())
