"""h5pack.jax.Loader: batches as jax.Arrays, on one device or sharded along the batch axis over several,
each device's shard filled (and on a GPU copied and converted) by its own reader's ring, and handed to JAX
through DLPack without a copy (docs/frameworks.md).

    loader = h5pack.jax.Loader("train.h5", batch_size=256, devices=jax.local_devices())
    for images, labels in loader:      # global batch, sharded: images.sharding is loader.sharding
        state = train_step(state, images, labels)     # a jax.jit step with that sharding
"""
import numpy as np

from . import _dlpack, _lib, _shards
from .numpy import batch_labels, host_ints, numpy_dtype
from ._core import framework
from ._stream import Stream


def _jax():
    return framework("jax", "h5pack.jax", "pip install jax (CPU) or 'jax[cuda12]'")


class _DeviceStream(Stream):
    """One reader whose batches become jax.Arrays on one device (the shard of one device)."""

    _framework = "h5pack.jax.Loader"

    def __init__(self, path, jax_device, **kwargs):
        self._jax_device = jax_device
        super().__init__(path, device="cpu" if jax_device.platform == "cpu" else "cuda", **kwargs)

    def _set_device(self, cfg, device):
        d = self._jax_device
        if d.platform == "cpu":
            cfg.device, self._dl_device = _lib.DEVICES["cpu"], (_dlpack.KDL_CPU, d.local_hardware_id)
            return
        if d.platform not in ("gpu", "cuda"):
            raise ValueError(f"h5pack.jax.Loader: device {d} ({d.platform}): h5pack feeds CPU and CUDA devices")
        cfg.device, cfg.gpu_id = _lib.DEVICES["cuda"], d.local_hardware_id
        self._dl_device = (_dlpack.KDL_CUDA, d.local_hardware_id)
        try:  # JAX's stream for arrays made elsewhere: the reader makes it wait for each batch
            cfg.cuda_stream = d.get_stream_for_external_ready_events() or 1
        except Exception:  # noqa: BLE001 - a JAX without it: the legacy default stream orders everything
            cfg.cuda_stream = 1

    def _images(self, b, shape, strides):
        memory = _dlpack.Memory(b.data, shape, numpy_dtype(self._info.dtype), self._dl_device, self)
        return _jax().dlpack.from_dlpack(memory), memory

    def _host_ints(self, raw, dtype, shape):
        return host_ints(raw, dtype, shape)

    def _labels(self, b):
        return batch_labels(b, self._info)

    def _clone_images(self, images):
        return _jax().numpy.array(images, copy=True)


def _batch_slices(sharding, batch_size, jax):
    """{device: (start, stop)} of the batch axis for each addressable device of SHARDING, checking that it
    splits the batch axis only, into equal parts."""
    probe = (batch_size, 8, 8, 8)
    try:
        index_map = sharding.addressable_devices_indices_map(probe)
    except Exception as e:  # noqa: BLE001 - JAX says why the shape does not fit
        raise ValueError(f"sharding={sharding}: batch_size={batch_size} does not divide along its batch axis "
                         f"({e})") from None
    out = {}
    for device, index in index_map.items():
        batch = index[0] if index else slice(None)
        for axis, part in enumerate(index[1:], 1):
            if part != slice(None) and (part.start or 0, part.stop) != (0, probe[axis]):
                raise ValueError(f"sharding={sharding} splits axis {axis}: h5pack shards the batch axis (axis 0) "
                                 f"only; use a PartitionSpec with None after the batch axis")
        out[device] = batch.indices(batch_size)[:2]
    lengths = {stop - start for start, stop in out.values()}
    if len(lengths) != 1:
        raise ValueError(f"sharding={sharding}: unequal batch shards {sorted(lengths)}")
    return out


class Loader:
    """h5pack.Loader's stream as jax.Arrays: ``(images, labels)`` (``indices`` last with
    ``with_indices=True``); the keywords of h5pack.Loader apply (but memory_format).

    One device: ``device="auto"`` (JAX's first device), ``"cpu"``, ``"cuda"`` / ``"cuda:N"`` (JAX's GPU
    N), or a jax Device. Several: ``devices=[...]`` (local devices; ``batch_size`` is this process's batch,
    split evenly) or ``sharding=`` a ``jax.sharding.NamedSharding`` whose first axis is the batch axis
    (``batch_size`` is the global batch of every process). Each step yields one batch sharded along the
    batch axis (``loader.sharding``): each device's shard is a reader of its own (rank
    ``process x shards + shard``), so across devices and processes every sample comes once per epoch.
    ``cache`` and ``threads`` are the process's, shared among the shards' readers. Without ``rank`` /
    ``world``, one device takes ``jax.process_index()`` / ``jax.process_count()``."""

    def __init__(self, path, batch_size=256, devices=None, sharding=None, device="auto", rank=None, world=None,
                 **kwargs):
        jax = _jax()
        if "memory_format" in kwargs:
            raise ValueError("h5pack.jax.Loader: memory_format= is PyTorch's; use layout='nhwc' for channels-last "
                             "arrays")
        self.path, self._streams = str(path), []
        batch_size = int(batch_size)
        if devices is not None and sharding is not None:
            raise ValueError("h5pack.jax.Loader: give devices= or sharding=, not both")
        if (devices is not None or sharding is not None) and (rank is not None or world is not None):
            raise ValueError("h5pack.jax.Loader: rank= and world= are set per device with devices= or sharding= "
                             "(rank = process x devices + device, from jax.process_index()); leave them out")
        try:
            if sharding is not None:
                self._open_sharded(jax, path, batch_size, sharding, kwargs)
            elif devices is not None:
                self._open_devices(jax, path, batch_size, list(devices), kwargs)
            else:
                self._open_one(jax, path, batch_size, self._one_device(jax, device), rank, world, kwargs)
        except BaseException:
            self.close()
            raise

    # ---- opening -----------------------------------------------------------------------------------

    @staticmethod
    def _one_device(jax, device):
        if not isinstance(device, str):
            return device  # a jax Device
        text = device.lower()
        if text == "auto":
            return jax.devices()[0]
        if text == "cpu":
            return jax.devices("cpu")[0]
        if text == "cuda" or text.startswith("cuda:"):
            try:
                gpus = jax.devices("gpu")
            except RuntimeError:
                gpus = []
            n = int(text[5:]) if ":" in text else 0
            if n >= len(gpus):
                raise ValueError(f"device={device!r}: JAX sees {len(gpus)} GPUs (install jax[cuda12] for "
                                 f"GPUs, or use device='cpu')")
            return gpus[n]
        raise ValueError(f"device={device!r}: 'auto', 'cpu', 'cuda', 'cuda:N' or a jax Device")

    def _open_one(self, jax, path, batch_size, device, rank, world, kwargs):
        rank = jax.process_index() if rank is None else rank
        world = jax.process_count() if world is None else world
        self._streams = [_DeviceStream(path, device, batch_size=batch_size, rank=rank, world=world, **kwargs)]
        self._devices, self.sharding, self._copies_to = [device], jax.sharding.SingleDeviceSharding(device), {}

    def _open_devices(self, jax, path, batch_size, devices, kwargs):
        local = set(jax.local_devices())
        missing = [d for d in devices if d not in local]
        if missing or not devices or len(set(devices)) != len(devices):
            why = f"{missing} are not this process's devices" if missing else "each device once, at least one"
            raise ValueError(f"devices={devices}: {why} (jax.local_devices() = {jax.local_devices()})")
        mesh = jax.sharding.Mesh(np.array(devices), ("batch",))
        sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("batch"))
        _shards.share(kwargs, len(devices), batch_size)  # checks the split first (it names the fix)
        shard = batch_size // len(devices)
        slices = {d: (k * shard, (k + 1) * shard) for k, d in enumerate(devices)}
        p, n = jax.process_index(), jax.process_count()
        self._open_shards(path, batch_size, sharding, slices, lambda g, count: (p * count + g, n * count), kwargs)

    def _open_sharded(self, jax, path, batch_size, sharding, kwargs):
        if not isinstance(sharding, jax.sharding.NamedSharding):
            raise ValueError(f"sharding={sharding!r}: a jax.sharding.NamedSharding whose first axis is the batch "
                             f"axis (e.g. NamedSharding(mesh, PartitionSpec('batch')))")
        slices = _batch_slices(sharding, batch_size, jax)
        length = next(iter(slices.values()))
        shards = batch_size // (length[1] - length[0])  # across every process: the global shard index is the rank
        local_batch = len(set(slices.values())) * (length[1] - length[0])
        self._open_shards(path, local_batch, sharding, slices, lambda g, count: (g, shards), kwargs,
                          global_batch=batch_size)

    def _open_shards(self, path, batch_size, sharding, slices, rank_world, kwargs, global_batch=None):
        """One reader per distinct batch slice; devices that share a slice (replicas) get a copy of it."""
        distinct = sorted(set(slices.values()))
        own = _shards.share(kwargs, len(distinct), batch_size)
        first = {}
        for device, part in slices.items():
            first.setdefault(part, device)
        length = distinct[0][1] - distinct[0][0]
        for part in distinct:
            rank, world = rank_world(part[0] // length, len(distinct))
            self._streams.append(_DeviceStream(path, first[part], rank=rank, world=world, **own))
        self._devices = [first[p] for p in distinct]
        self._copies_to = {d: first[p] for d, p in slices.items() if first[p] is not d}
        self.sharding = sharding
        # the array spans this process's shards (devices=) or every process's (sharding=, a global batch)
        self._shards_in_array = len(distinct) if global_batch is None else global_batch // length

    # ---- iteration ----------------------------------------------------------------------------------

    def __len__(self):
        return len(self._streams[0])

    def __iter__(self):
        iterators = [iter(s) for s in self._streams]
        if len(iterators) == 1:
            device = self._devices[0]
            for parts in iterators[0]:
                yield tuple(self._on_device(x, device) for x in parts)
            return
        for shards in zip(*iterators):
            yield tuple(self._global(list(column)) for column in zip(*shards))

    @staticmethod
    def _on_device(x, device):
        if x is None or not isinstance(x, np.ndarray):
            return x
        return _jax().device_put(x, device)

    def _global(self, column):
        """One global array from each shard's part (images: jax.Arrays already on their devices; labels
        and indices: numpy, put on the shard's device)."""
        if column[0] is None:
            return None
        jax = _jax()
        if isinstance(column[0], np.ndarray) and not self._copies_to:  # labels, indices: small, one transfer
            spec = self.sharding.spec
            sharding = jax.sharding.NamedSharding(self.sharding.mesh,
                                                  jax.sharding.PartitionSpec(spec[0] if spec else None))
            return jax.make_array_from_process_local_data(sharding, np.concatenate(column))
        parts = [self._on_device(x, d) for x, d in zip(column, self._devices)]
        parts += [jax.device_put(parts[self._devices.index(src)], d) for d, src in self._copies_to.items()]
        shape = (column[0].shape[0] * self._shards_in_array,) + tuple(column[0].shape[1:])
        spec = self.sharding.spec
        sharding = jax.sharding.NamedSharding(self.sharding.mesh, jax.sharding.PartitionSpec(spec[0] if spec else None))
        return jax.make_array_from_single_device_arrays(shape, sharding, parts)

    # ---- position, information, life ------------------------------------------------------------------

    @property
    def devices(self):
        return list(self._devices) + list(self._copies_to)

    @property
    def fingerprint(self):
        return self._streams[0].fingerprint

    @property
    def epoch(self):
        return self._streams[0].epoch

    @property
    def info(self):
        return self._streams[0].info

    def state_dict(self):
        """As h5pack.Loader's (every shard stands at the same position), with the shard count."""
        return dict(self._streams[0].state_dict(), shards=len(self._streams))

    def load_state_dict(self, state_dict):
        """As h5pack.Loader's: any number of shards and processes continues it (elastic resume)."""
        sd = {k: v for k, v in state_dict.items() if k != "shards"} if isinstance(state_dict, dict) else state_dict
        for s in self._streams:
            s.load_state_dict(sd)

    def set_epoch(self, epoch):
        for s in self._streams:
            s.set_epoch(epoch)

    def set_output_size(self, size):
        for s in self._streams:
            s.set_output_size(size)

    def stats(self):
        """The shards' counters summed (rates of the sums; elapsed the longest)."""
        total = {}
        for d in (s.stats() for s in self._streams):
            for k, v in d.items():
                total[k] = max(total.get(k, 0), v) if k == "elapsed_s" else total.get(k, 0) + v
        uses = total["chunk_hits"] + total["chunk_misses"]
        total["hit_rate"] = total["chunk_hits"] / uses if uses else 0.0
        total["read_amplification"] = total["bytes_read"] / total["bytes_needed"] if total["bytes_needed"] else 0.0
        total["stall_fraction"] = total["stall_s"] / total["elapsed_s"] / len(self._streams) if total["elapsed_s"] else 0.0
        return total

    def close(self):
        for s in self._streams:
            s.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"h5pack.jax.Loader({self.path!r}, devices={self.devices}, batches_per_epoch={len(self)})"
