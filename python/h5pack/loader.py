"""h5pack.Loader: the PyTorch front-end, a DataLoader-like iterable over an h5pack file (torch tensors over
the reader's memory). The loader itself, without a framework, is _stream.Stream."""
try:
    import torch
except ImportError as _e:  # the PyTorch front-end: the others need no torch (docs/frameworks.md)
    raise ImportError(f"h5pack.Loader is PyTorch's front-end and needs torch ({_e}): pip install torch, or use "
                      f"h5pack.numpy.Loader, h5pack.jax.Loader or h5pack.tf.dataset") from None

import ctypes

from . import _labels, _tensors
from ._core import H5packError, H5packValueError, default_config, error_from, lib, version  # noqa: F401
from ._core import open_reader as _open  # noqa: F401  (older name, kept for scripts that used it)
from ._core import default_config as _default_config  # noqa: F401
from ._stream import Stream


class Loader(Stream):
    """Iterable over shuffled, normalised batches of an h5pack file, like a torch DataLoader.

    Each ``for`` over the loader is one epoch: ``len(loader)`` = batches_per_epoch * echo batches of
    ``(images, labels)`` (plus ``indices`` with ``with_indices=True``). ``images`` is a
    (B, C, H, W) tensor (``layout="nhwc"``: (B, H, W, C)) of ``dtype`` on the reader's device, ``labels``
    int64 (B,) on the same device (None for a file without labels; (B, K) for labels (N, K), float32 when
    the file's labels are floating point), ``indices`` int64 (B,) file rows.

    Augmentation (docs/augmentation.md): ``crop="random_resized"`` (torchvision's RandomResizedCrop with
    ``scale`` and ``ratio``, PIL's antialiased bilinear resize) or ``crop="center"`` (the central
    ``center_ratio`` of the shorter side) to ``output_size`` (int or (h, w); None = the stored size),
    ``flip``, normalisation, all fused in one pass on the reader's device. ``set_output_size`` changes the
    size from the next epoch on, up to ``max_output_size``. ``echo_mode="sample"`` delivers each sample
    ``echo`` times per epoch in different batches instead of repeating whole batches. ``last_boxes`` has
    the crop box and flip of each image of the latest batch.

    Segmentation masks (docs/python.md, "Masks"): ``masks=True`` (the file's ``masks`` dataset; or
    ``masks="name"``) yields ``(images, labels, masks)``, masks (B, H, W) ``mask_dtype`` ("uint8" as stored,
    or "int64" class indices for CrossEntropyLoss), each with its image's crop box, nearest-neighbour resize
    and flip; a copy, on the CPU (the GPU backend has no masks yet).

    Huge images in tiles (``h5pack --tiles``, docs/patches.md): ``patch=S`` yields S x S patches instead of
    whole images, ``patch_mode="random"`` (the default: ``patches_per_epoch`` per epoch, images weighted by
    area, positions uniform; with ``flip`` and normalisation as above) or ``"sliding"`` (every window with
    ``overlap``; h5pack.Patches is the inference form). ``last_where`` has each patch's (image, y, x).

    ``timeline="run.csv"`` makes the reader write a CSV row every ``timeline_interval`` seconds (default
    1) while it lives: samples/s, MB/s, stall fraction, hit rate, GPU idle (docs/stats.md, "Timeline");
    None uses ``$H5PACK_TIMELINE`` when set, ``""`` writes none.

    Zero copy: the tensors are views of the reader's batch buffers. A batch nothing references goes
    back to the reader at the next batch; one still referenced is held, up to ``keep`` batches (default
    ``prefetch - 1``; 1 with ``echo > 1``, whose echoes share buffers), then moved onto its own copy
    (copy-on-hold): what you keep keeps its values. ``copy=True`` clones every batch at once.
    On the GPU the loader follows ``torch.cuda.current_stream()``: a batch is ready for the stream that
    is current when it is yielded, and its buffer is reused only after the work queued on the stream
    current when it is given back (e.g. a loop run under ``with torch.cuda.stream(s):``).

    Each ``for`` is one whole epoch, as with DataLoader: after a ``for`` left early (``break``, a peek
    with ``next(iter(loader))``, an exception) the next ``for`` starts the next epoch from its first
    batch; ``state_dict()`` / ``load_state_dict()`` continue mid-epoch exactly. One iteration at a time:
    ``zip(loader, loader)`` raises. With ``epochs=N`` the loader stops after N epochs (later ``for``
    loops yield nothing).

    Resume and distributed training (docs/python.md, "Resume"): ``state_dict()`` / ``load_state_dict()``
    (torchdata's StatefulDataLoader convention) continue an interrupted run exactly, batch for batch;
    ``set_epoch(e)`` (DistributedSampler's convention) makes the next ``for`` run epoch ``e``. Under
    torch.distributed the first ``for`` checks that every rank's ``fingerprint`` agrees (a loader whose world
    is not the job's, e.g. world=1 for validation on rank 0, is not checked). ``rank`` and
    ``world`` left out come from the job: torch.distributed's rank and world size when it is initialised,
    else the ``RANK`` and ``WORLD_SIZE`` variables that torchrun sets, else 0 and 1; given, they win.
    ``device="auto"`` (or ``"cuda"``) then takes GPU ``LOCAL_RANK`` when torchrun set it.
    """

    _torch_job = True

    @property
    def _framework(self):  # h5pack.Loader or h5pack.Patches, in messages
        return f"h5pack.{type(self).__name__}"
    _copy_call = ".clone()"

    def __init__(self, path, *args, memory_format=None, **kwargs):
        self._memory_format_arg = memory_format
        super().__init__(path, *args, **kwargs)

    def __getitem__(self, index):
        raise TypeError("h5pack.Loader is not a Dataset and yields whole batches: iterate it directly "
                        "(for images, labels in loader) instead of wrapping it in torch.utils.data.DataLoader; "
                        "its threads=, order=, batch_size=, crop=/flip= and device= take the place of the "
                        "DataLoader's workers, sampler, batching, transforms and pin_memory")

    # ---- torch's side of the front-end interface (_stream.py) -------------------------------------------

    def _reader_layout(self, layout):
        """memory_format=torch.channels_last: (B, C, H, W) tensors with channels-last strides (the reader
        writes NHWC); returns the layout the reader writes."""
        memory_format = self._memory_format_arg
        if memory_format in (None, torch.contiguous_format):
            self._channels_last = False
            return layout
        if memory_format is not torch.channels_last:
            raise ValueError(f"memory_format={memory_format!r}: torch.contiguous_format or torch.channels_last")
        if str(layout).lower() != "nchw":
            raise ValueError(f"memory_format=torch.channels_last gives (B, C, H, W) tensors: leave layout "
                             f"({layout!r}) at 'nchw'")
        self._channels_last = True
        return "nhwc"

    def _set_device(self, cfg, device):
        """The device the library was given (cfg.device, cfg.gpu_id), as torch can use it."""
        from . import _lib, _resume

        torch_cuda = torch.cuda.is_available()
        if cfg.device == _lib.DEVICES["auto"] and not torch_cuda:
            cfg.device = _lib.DEVICES["cpu"]  # tensors torch could not use: let the library stay on the CPU
        if cfg.device == _lib.DEVICES["cuda"] and not torch_cuda:
            raise ValueError(f"device={device!r}, but this torch has no usable CUDA device")
        if cfg.device != _lib.DEVICES["cpu"] and not str(device).lower().startswith("cuda:"):
            cfg.gpu_id = _resume.job_gpu(torch.cuda.current_device(), torch.cuda.device_count())
        self._stream = None
        if cfg.device != _lib.DEVICES["cpu"]:
            self._stream = torch.cuda.current_stream(cfg.gpu_id)  # the reader's: orders its copies and reuse
            stream = self._stream.cuda_stream
            # torch's default stream is the legacy NULL stream: name it cudaStreamLegacy (0x1), since NULL
            # in the config means "no stream to order against".
            cfg.cuda_stream = stream or 1

    def _images(self, b, shape, strides):
        dt = self._info.dtype
        if self._channels_last:  # NHWC memory seen as (B, C, H, W)
            n, h, w, c = shape
            shape, strides = (n, c, h, w), (h * w * c, 1, w * c, c)
        if b.on_device:
            return _tensors.device_tensor(b.data, b.bytes, dt, shape, self._gpu, self, strides)
        return _tensors.host_tensor(b.data, b.bytes, dt, shape, self, strides)

    def _host_copy(self, address, nbytes, dtype, shape):
        """One copy, straight into the tensor (a batch of masks is megabytes: no bytes object between)."""
        t = torch.empty(shape, dtype={"int64": torch.int64, "uint8": torch.uint8}[dtype])
        if nbytes:
            ctypes.memmove(t.data_ptr(), address, nbytes)
        return t

    def _host_ints(self, raw, dtype, shape):
        dtype = {"int32": torch.int32, "int64": torch.int64, "uint8": torch.uint8}[dtype]
        if not raw:
            return torch.zeros(shape, dtype=dtype)
        return torch.frombuffer(bytearray(raw), dtype=dtype).view(shape)

    def _labels(self, b):
        # labels (B,) or (B, K), int64 or float32, as the file's labels (N,) / (N, K) are; a copy
        return _labels.batch_labels(b, self._info, self._gpu)

    def _clone_images(self, images):
        return images.clone()

    def _move_held(self, held):
        """A tensor the user still holds moves onto a private copy in place (Tensor.set_ with a clone, on
        the current stream on the GPU): the user's tensor keeps its values. True when nothing reads the
        reader's memory any more; a view (images[0]) cannot be moved: False."""
        t = held.images()
        if t is not None:
            t.set_(t.clone())  # clone keeps the strides (channels_last too)
            del t
        return held.exporter() is None

    def _before_close(self, held):
        if self._stream is not None and any(getattr(h.images(), "is_cuda", False) for h in held):
            torch.cuda.current_stream(self._stream.device).synchronize()  # the copies read the reader's memory

    def _follow_stream(self, consumer_waits):
        """The reader orders its work against the stream that was current at open. When the caller's
        current stream is another one, make it wait for the reader's (a delivery: CONSUMER_WAITS) or the
        reader's wait for it (a release: its kernels on the batch must be over before the buffer is
        refilled)."""
        if self._stream is None:
            return
        current = torch.cuda.current_stream(self._stream.device)
        if current != self._stream:
            (current.wait_stream(self._stream) if consumer_waits else self._stream.wait_stream(current))
