"""NumPy, JAX and TensorFlow front-ends (docs/frameworks.md), run by a Python with numpy, jax (CPU) and
tensorflow-cpu but neither torch nor h5py (the venv of cmake/install-frameworks.sh):
  - `import h5pack` imports no framework; h5pack.info names the classes without h5py;
  - h5pack.numpy.Loader: values equal to the stored images, every index once, zero copy (the array's
    memory is the reader's batch), kept batches and views keep their values (h5pack_detach), after close;
  - h5pack.jax.Loader: zero copy on one device; sharded over 4 host devices, each shard on its device at
    its reader's memory, every index once per epoch, a jitted step trains over an epoch, resume mid-epoch;
    sharding= as devices=; bad devices / shardings / batch sizes named;
  - h5pack.tf.dataset: zero copy, the same values, Keras model.fit under MirroredStrategy over 2 logical
    CPUs, each index once per epoch across replicas.
Usage: test_frameworks.py H5PACK_CLI GEN_IMAGES   (skipped when jax or tensorflow is missing, unless
H5PACK_REQUIRE_FRAMEWORKS=1: then that fails)."""
import os
import subprocess
import sys
import tempfile

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import h5test  # noqa: E402
from h5test import check  # noqa: E402

h5test.verbose = True

FRAMEWORKS = {}


def need(name):
    try:
        FRAMEWORKS[name] = __import__(name)
    except ImportError as e:
        if os.environ.get("H5PACK_REQUIRE_FRAMEWORKS") == "1":
            check(False, f"{name} is required here (H5PACK_REQUIRE_FRAMEWORKS=1) but not installed: {e}", fatal=True)
        h5test.skip(f"{name} not installed ({e}); cmake/install-frameworks.sh makes the venv")
    return FRAMEWORKS[name]


def make_file(cli, gen, tmp, name, per_class=25, extra=()):
    images = os.path.join(tmp, name + "_src")
    if not os.path.isdir(images):
        subprocess.run([gen, images, "--classes", "4", "--per-class", str(per_class), "--seed", "3",
                        "--min-size", "24", "--max-size", "40"], check=True, stdout=subprocess.DEVNULL)
    out = os.path.join(tmp, name + ".h5")
    subprocess.run([cli, "-q", "--size", "32x32", *extra, images, out], check=True)
    return out


def test_import_is_framework_free(path):
    import h5pack

    loaded = [m for m in ("torch", "jax", "tensorflow", "h5py") if m in sys.modules]
    check(not loaded, f"import h5pack imported no framework (found {loaded})")
    d = h5pack.info(path)
    check(d["n_samples"] == 100 and d["n_classes"] == 4, f"info: 100 samples, 4 classes ({d['n_samples']}, "
                                                         f"{d['n_classes']})")
    check(d.get("classes") == sorted(d.get("classes") or []) and len(d.get("classes") or []) == 4,
          f"info names the 4 classes without h5py: {d.get('classes')}")
    check(len(d.get("filenames") or []) == 100, "info gives the 100 source file names")
    still = [m for m in ("torch", "jax", "tensorflow", "h5py") if m in sys.modules]
    check(not still, f"info imported no framework ({still})")


def numpy_epoch(path, **kw):
    import h5pack.numpy

    with h5pack.numpy.Loader(path, with_indices=True, copy=True, **kw) as loader:
        return [(x, y, i) for x, y, i in loader]


def test_numpy(path):
    import numpy as np

    import h5pack
    import h5pack.numpy

    check("torch" not in sys.modules, "h5pack.numpy imports no torch")
    with h5pack.numpy.Loader(path, batch_size=16, dtype="uint8", norm="none", with_indices=True, seed=5,
                             threads=2) as loader:
        seen = []
        for images, labels, idx in loader:
            held = loader._held[-1].batch
            check(images.ctypes.data == held.data, "numpy images are the reader's batch memory (zero copy)")
            check(isinstance(images, np.ndarray) and images.dtype == np.uint8 and images.shape[1:] == (3, 32, 32),
                  f"uint8 (B, 3, 32, 32) arrays ({images.dtype}, {images.shape})")
            for k in (0, len(idx) - 1):
                stored = h5pack.read_image(path, int(idx[k])).transpose(2, 0, 1)
                check(np.array_equal(images[k], stored), f"image of row {idx[k]} equals the stored one")
            seen += idx.tolist()
        check(sorted(seen) == list(range(100)), "every index once per epoch")

    # kept batches and views keep their values: the reader hands their memory over (h5pack_detach)
    kw = dict(batch_size=8, crop="random_resized", output_size=24, flip=True, seed=9, threads=2, prefetch=3)
    expected = numpy_epoch(path, **kw)
    loader = h5pack.numpy.Loader(path, with_indices=True, **kw)
    kept, views = [], []
    for images, labels, idx in loader:
        kept.append((images, labels, idx))
        views.append(images[1])
    check(loader._detached >= len(kept) - loader._keep, f"held batches were detached, not copied "
                                                        f"({loader._detached} of {len(kept)})")
    loader.close()
    h5pack.trim()
    same = all(np.array_equal(a[0], b[0]) and np.array_equal(a[2], b[2]) for a, b in zip(kept, expected))
    check(same and len(kept) == len(expected), "every kept batch keeps its values, after close and trim")
    check(all(np.array_equal(v, e[0][1]) for v, e in zip(views, expected)), "kept views keep their values")
    for bad, why in ((dict(device="cuda"), "device="), (dict(memory_format="channels_last"), "memory_format")):
        try:
            h5pack.numpy.Loader(path, **bad)
            check(False, f"{bad} refused")
        except (ValueError, TypeError) as e:
            check(why in str(e), f"{bad} refused naming {why!r}: {e}")


def test_jax_one_device(path):
    jax = need("jax")
    import numpy as np

    import h5pack.jax

    kw = dict(batch_size=16, crop="center", output_size=24, seed=4, threads=2)
    expected = numpy_epoch(path, **kw)
    with h5pack.jax.Loader(path, with_indices=True, device="cpu", **kw) as loader:
        n = 0
        for (images, labels, idx), e in zip(loader, expected):
            stream = loader._streams[0]
            check(isinstance(images, jax.Array), "images are jax.Arrays")
            check(images.unsafe_buffer_pointer() == stream._held[-1].batch.data,
                  "the jax.Array's buffer is the reader's batch memory (zero copy)")
            check(np.array_equal(np.asarray(images), e[0]) and np.array_equal(np.asarray(idx), e[2]),
                  "jax batch equals the numpy loader's")
            n += 1
        check(n == len(expected), f"{n} batches, {len(expected)} expected")

    # kept jax.Arrays keep their values after more batches and after close (the memory handed over)
    loader = h5pack.jax.Loader(path, with_indices=True, device="cpu", prefetch=3, **kw)
    kept = [images for images, _, _ in loader]
    loader.close()
    import h5pack as _h5pack
    _h5pack.trim()
    check(all(np.array_equal(np.asarray(k), e[0]) for k, e in zip(kept, expected)) and len(kept) == len(expected),
          "every kept jax.Array keeps its values after close and trim")
    sums = [(float(jax.numpy.sum(k)), float(e[0].sum())) for k, e in zip(kept, expected)]
    check(all(abs(a - b) <= 1e-4 * abs(b) + 1e-2 for a, b in sums), f"jax computes on kept arrays after close {sums[:2]}")
    del kept, images, labels, idx  # (the first loop's last batch too)
    check(_dlpack_exports() == 0, f"no DLPack export left once the arrays are gone ({_dlpack_exports()})")


def test_jax_sharded(path):
    jax = need("jax")
    import numpy as np

    import h5pack.jax

    devices = jax.devices()
    check(len(devices) == 4, f"4 host devices (XLA_FLAGS): {devices}", fatal=True)
    kw = dict(batch_size=32, seed=7, threads=2, cache="4M", norm="imagenet")
    loader = h5pack.jax.Loader(path, devices=devices, with_indices=True, **kw)
    check(len(loader._streams) == 4, "one reader per device")
    seen = []
    for images, labels, idx in loader:
        check(images.shape[0] == idx.shape[0] and len(images.addressable_shards) == 4, "a global batch in 4 shards")
        for shard, stream in zip(sorted(images.addressable_shards, key=lambda s: s.index[0].start or 0),
                                 loader._streams):
            check(shard.device == stream._jax_device, f"shard {shard.index[0]} on its reader's device")
            check(shard.data.unsafe_buffer_pointer() == stream._held[-1].batch.data,
                  "each shard is its reader's memory (zero copy)")
        seen += np.asarray(idx).tolist()
    check(sorted(seen) == list(range(100)) or (len(seen) >= 100 and set(seen) == set(range(100))),
          f"every index in an epoch over 4 devices ({len(seen)} rows, {len(set(seen))} distinct)")

    # a jitted step with the loader's sharding trains a linear model for an epoch
    w = jax.device_put(np.zeros((3,), np.float32))

    @jax.jit
    def step(w, images, labels):
        def loss(w):
            feat = images.mean(axis=(2, 3))
            return ((feat @ w - labels.astype(np.float32) / 4) ** 2).mean()
        value, grad = jax.value_and_grad(loss)(w)
        return w - 0.5 * grad, value

    losses = []
    for epoch in range(3):
        for images, labels, idx in loader:
            w, value = step(w, images, labels)
            losses.append(float(value))
    check(losses[-1] < losses[0], f"the jitted step trains over sharded batches ({losses[0]:.4f} -> {losses[-1]:.4f})")

    # resume mid-epoch: the rest of the epoch equals the uninterrupted run's
    full = [np.asarray(i) for _, _, i in h5pack.jax.Loader(path, devices=devices, with_indices=True, **kw)]
    first = h5pack.jax.Loader(path, devices=devices, with_indices=True, **kw)
    it = iter(first)
    next(it), next(it)
    state = first.state_dict()
    del it
    first.close()
    again = h5pack.jax.Loader(path, devices=devices, with_indices=True, **kw)
    again.load_state_dict(state)
    rest = [np.asarray(i) for _, _, i in again]
    check(len(rest) == len(full) - 2 and all(np.array_equal(a, b) for a, b in zip(rest, full[2:])),
          "resumed mid-epoch: the rest of the epoch as the uninterrupted run's")
    again.close()
    loader.close()

    # two processes of two devices each (jax.process_index / process_count as a 2-process job would say):
    # the four shards' readers split every epoch, each index once across the processes
    real = jax.process_index, jax.process_count
    seen = []
    try:
        for process in (0, 1):
            jax.process_index, jax.process_count = (lambda p=process: p), (lambda: 2)
            with h5pack.jax.Loader(path, devices=devices[2 * process:2 * process + 2], with_indices=True,
                                   **dict(kw, batch_size=16)) as part:
                ranks = [(int(s._cfg.rank), int(s._cfg.world)) for s in part._streams]
                check(ranks == [(2 * process, 4), (2 * process + 1, 4)], f"process {process}'s shards are ranks {ranks}")
                seen += [int(i) for _, _, idx in part for i in np.asarray(idx)]
    finally:
        jax.process_index, jax.process_count = real
    check(sorted(set(seen)) == list(range(100)) and len(seen) - len(set(seen)) < 4,
          f"2 processes x 2 devices: every index in the epoch ({len(seen)} rows, {len(set(seen))} distinct)")

    mesh = jax.sharding.Mesh(np.array(devices), ("data",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("data"))
    with h5pack.jax.Loader(path, sharding=sharding, with_indices=True, **kw) as by_sharding:
        same = [np.asarray(i) for _, _, i in by_sharding]
        check(len(same) == len(full) and all(np.array_equal(a, b) for a, b in zip(same, full)),
              "sharding= gives the batches of devices= over the same devices")
        images = next(iter(by_sharding))[0]
        check(images.sharding.is_equivalent_to(sharding, images.ndim), "the batch has the sharding given")

    bad = [(dict(devices=devices, batch_size=30), "multiple of 4"),
           (dict(device="cuda"), "GPU"),
           (dict(devices=devices, rank=1), "rank="),
           (dict(sharding=jax.sharding.NamedSharding(jax.sharding.Mesh(np.array(devices).reshape(2, 2), ("a", "b")),
                                                     jax.sharding.PartitionSpec("a", "b"))), "axis 1")]
    for args, why in bad:
        try:
            h5pack.jax.Loader(path, **args).close()
            check(False, f"{args} refused")
        except ValueError as e:
            check(why in str(e), f"refused naming {why!r}: {e}")


def test_tf(path):
    tf = need("tensorflow")
    import numpy as np

    cpus = tf.config.list_physical_devices("CPU")  # 2 logical CPUs for MirroredStrategy, before TF starts
    tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)

    import h5pack.tf

    kw = dict(batch_size=16, seed=2, threads=2, crop="random_resized", output_size=24, flip=True)
    expected = numpy_epoch(path, **kw)
    ds = h5pack.tf.dataset(path, with_indices=True, **kw)
    stream = h5pack.tf.stream_of(ds)
    n = 0
    for (images, labels, idx), e in zip(ds, expected):
        pointer = tf.experimental.dlpack.to_dlpack(images)
        check(_capsule_data(pointer) in [h.batch.data for h in stream._held], "the tf.Tensor is a batch's memory")
        check(np.array_equal(images.numpy(), e[0]) and np.array_equal(idx.numpy(), e[2]),
              "tf batch equals the numpy loader's")
        n += 1
    check(n == len(expected), f"{n} tf batches of {len(expected)}")
    keeping = h5pack.tf.dataset(path, with_indices=True, prefetch=3, **kw)
    kept = [images for images, _, _ in keeping]
    h5pack.tf.stream_of(keeping).close()
    check(all(np.array_equal(k.numpy(), e[0]) for k, e in zip(kept, expected)),
          "kept tf.Tensors keep their values after close")

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    check(strategy.num_replicas_in_sync == 2, "2 replicas")
    per_replica = 8
    fit_ds = strategy.distribute_datasets_from_function(
        lambda ctx: h5pack.tf.dataset(path, batch_size=ctx.get_per_replica_batch_size(2 * per_replica),
                                      input_context=ctx, layout="nhwc", threads=2, seed=1, drop_last=True))
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((32, 32, 3)), tf.keras.layers.GlobalAveragePooling2D(),
                                     tf.keras.layers.Dense(4)])
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(fit_ds, epochs=3, verbose=0)  # each Keras epoch iterates the dataset: one h5pack epoch
    losses = history.history["loss"]
    check(all(np.isfinite(losses)) and len(losses) == 3, f"model.fit over MirroredStrategy: {losses}")

    idx_ds = strategy.distribute_datasets_from_function(
        lambda ctx: h5pack.tf.dataset(path, batch_size=ctx.get_per_replica_batch_size(16), input_context=ctx,
                                      with_indices=True, threads=2))
    seen, devices = [], set()
    for images, labels, idx in idx_ds:
        for part, ids in zip(strategy.experimental_local_results(images), strategy.experimental_local_results(idx)):
            devices.add(part.device)
            seen += ids.numpy().tolist()
    check(sorted(seen) == list(range(100)), f"every index once per epoch across replicas ({len(seen)} rows)")
    check(len(devices) == 2, f"each replica's share on its own device: {sorted(devices)}")


def _dlpack_exports():
    import gc

    from h5pack import _dlpack

    gc.collect()
    return _dlpack.exported_count()


def _capsule_data(capsule):
    import ctypes

    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return ctypes.c_void_p.from_address(get(capsule, b"dltensor")).value


def main():
    cli, gen = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        path = make_file(cli, gen, tmp, "small")
        test_import_is_framework_free(path)
        test_numpy(path)
        test_jax_one_device(path)
        test_jax_sharded(path)
        test_tf(path)
    h5test.finish("numpy, jax and tensorflow front-ends: all checks passed")


if __name__ == "__main__":
    main()
