"""The loader every front-end shares, with no framework in it: configuration from the keywords, the reader's
life (open, reopen for resume and set_epoch, close), one epoch per ``for``, resume, stats, and which
delivered batches go back to the reader when (zero copy, copy-on-hold: _copy_on_hold.py).

A front-end (loader.py for PyTorch, numpy.py, jax.py, tf.py) subclasses Stream and says how its arrays are
made over the reader's memory:
    _set_device(cfg, device)        the library's device for DEVICE, as the framework can use it
    _images(b, shape, strides)      (images, exporter): an array over the batch's memory without a copy,
                                    and the object whose life is the life of every array over that memory
    _host_ints(raw, dtype, shape)   a small array of its own from bytes (labels, indices, boxes, where)
    _labels(b)                      the batch's labels (None for a file without labels)
    _move_held(held)                a held batch's arrays are off the reader's memory (True) or still on
                                    it (False); the default detaches the memory (h5pack_detach)
    _follow_stream(consumer_waits)  GPU stream ordering (no-op by default)
"""
import collections
import ctypes
import os
import sys
import weakref

from . import _convert, _copy_on_hold, _dataloader_args, _dlpack, _lib, _norm, _params, _resume, _shuffle, _sizes
from ._core import (H5packError, check_same_file, default_config, file_identity, lib, loaded, open_reader,
                    reader_error)
from ._structs import _info_dict, _struct_dict


class Stream:
    _framework = "h5pack.Loader"  # how messages name the front-end
    _copy_call = ".copy()"  # how the framework's users copy an array, in messages
    _torch_job = False  # rank, world and the ranks' agreement from torch.distributed (the PyTorch front-end)

    def __init__(self, path, batch_size=256, order="chunk", cache="1G", echo=1, device="auto", seed=0,
                 rank=None, world=None, epochs=None, threads=None, dtype="float32", layout="nchw", norm="imagenet",
                 flip=False, crop_padding=0, drop_last=False, window=None, prefetch=4, keep=None, copy=False,
                 return_indices=False, images="images", labels="labels", device_memory_limit=0, crop=None,
                 output_size=None, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3), center_ratio=0.875,
                 echo_mode="batch", with_indices=False, max_output_size=None, timeline=None,
                 timeline_interval=None, input_layout="auto", patch=None, overlap=0,
                 patch_mode=None, patches_per_epoch=None, masks=False, mask_dtype="uint8", **dataloader_args):
        _dataloader_args.refuse(dataloader_args, self._framework)
        self._reader, self._api_name = None, self._framework  # Loader or Patches, in messages
        self._stats_before = {}  # earlier readers' counters (load_state_dict / set_epoch reopen)
        self._held = collections.deque()  # _copy_on_hold.Held of the deliveries not given back yet
        self._pinned = []  # given back by the user but still read through views (_copy_on_hold.py)
        self.path = os.fspath(path)
        # the keywords that set parameters, as called: the alias map (_params.py) says what each sets
        called = locals()
        given = {k: v for k, v in called.items() if k in _params.BY_KEYWORD}
        given["rank"], given["world"] = _resume.job_rank_world(rank, world, self._torch_job)
        given["layout"] = self._reader_layout(layout)
        if patch and patch_mode is None:
            given["patch_mode"] = "random"  # training patches unless told otherwise (Patches: sliding)
        cfg = default_config()
        _params.configure(cfg, given)
        self._norm_values = _norm.count(norm)
        self._set_device(cfg, device)
        self._echo_factor, self._gpu = max(1, cfg.echo), cfg.gpu_id
        self._keep = self._keep_option(keep, int(cfg.prefetch), int(cfg.echo), copy)
        self._copy, self._return_indices = copy, bool(with_indices or return_indices)
        self._copies = 0  # held image arrays moved onto their own copy (copy-on-hold), for tests and stats
        self._detached = 0  # held batches whose memory was detached from the reader (h5pack_detach)
        self._last_boxes = self._last_where = None
        self._cfg, self._ranks_checked, self._live_iter = cfg, False, None
        self._restored = False  # load_state_dict put the stream mid-epoch on purpose: the next for continues
        self._origin = (None, 0)  # (epoch, origin): where that epoch's global batches start (0: its own)
        self._sizes = _sizes.OutputSizes((cfg.output_height, cfg.output_width))  # set_output_size's, for reopens
        self._open_at(0, 0, 0)
        _shuffle.warn_if_narrow(self._info, cfg, self.path, cache)
        _copy_on_hold.LIVE.add(self)
        channels, given = int(self._info.channels), self._norm_values
        if given not in (None, 1, channels):
            self.close()
            raise ValueError(f"norm=(mean, std) has {given} values each, but {self.path} has {channels} "
                             f"channels: give {channels}, or one for every channel")

    # ---- what a front-end provides (see the module's docstring) -------------------------------------

    def _reader_layout(self, layout):
        return layout

    def _set_device(self, cfg, device):
        raise NotImplementedError

    def _images(self, b, shape, strides):
        raise NotImplementedError

    def _host_ints(self, raw, dtype, shape):
        raise NotImplementedError

    def _labels(self, b):
        raise NotImplementedError

    def _clone_images(self, images):
        raise NotImplementedError

    def _follow_stream(self, consumer_waits):
        pass

    def _move_held(self, held):
        """The default for arrays that cannot be moved onto new memory (NumPy, JAX, TensorFlow): the
        reader hands the batch's memory over to the arrays (h5pack_detach) and takes new memory for its
        ring; the memory is freed when the last array over it is gone. True: the batch may go back."""
        exporter = held.exporter()
        if exporter is None:
            return True
        handle, copied = ctypes.c_void_p(), ctypes.c_int(0)
        rc = lib().h5pack_detach(self._reader, ctypes.byref(held.batch), ctypes.byref(handle), ctypes.byref(copied))
        if rc == _lib.ESTATE:  # a reader that cannot hand this memory over: the batch stays
            return False       # unreleased while it is used (pinned), as a PyTorch view's does
        if rc < 0:
            raise reader_error(rc, self._reader, f"{self.path}: keeping a held batch")
        weakref.finalize(exporter, _free_detached, handle.value).atexit = False  # the process frees it then
        self._detached += 1
        return True

    # ---- configuration ------------------------------------------------------------------------------

    @staticmethod
    def _keep_option(keep, prefetch, echo, copy):
        """How many still-referenced batches are held zero-copy: by default prefetch - 1, so the one a plain
        `for x, y in loader` still binds while the next is fetched is not copied (batches nobody
        references go back at once); echoes share their batch's buffers, so there each delivery goes back
        before the next, and so does every batch with a ring of one buffer (prefetch=1)."""
        most = max(1, prefetch - 1)
        keep = (most if echo <= 1 else 1) if keep is None else keep
        keep = _convert.int_option(keep, "keep", 0, _convert.I32_MAX)
        if not 1 <= keep <= most:
            raise ValueError(f"keep={keep} must be between 1 and {'prefetch - 1 = ' if prefetch > 1 else ''}{most}")
        if keep > 1 and echo > 1 and not copy:
            # The reader delivers the echoes of a batch in the same buffers and refuses the next echo while
            # the previous delivery is held: keep > 1 would fail at the second batch.
            raise ValueError(f"keep={keep} with echo={echo}: the echoes of a batch share its buffers, so each "
                             f"is valid only until the next one; use keep=1 (and a copy) or copy=True")
        return keep

    def _open_at(self, epoch, batch, echo, origin=0):
        """(Re)opens the reader so that its first delivery is echo ECHO of batch BATCH of epoch EPOCH, that
        epoch's global batches starting at ORIGIN of its order (0: its own; else a state saved with another
        global batch: h5pack_config.start_sample); if that fails, the loader stays where it was (and the
        error is raised)."""
        e = self._echo_factor
        before = ((self._epochs_done, self._pos // e, self._pos % e, self._origin_now())
                  if self._reader is not None else None)
        if self._reader is not None:
            self._stats_before = self.stats()  # counted on: stats() covers every reader of this loader
        self.close()  # first: two readers at once would hold two caches
        sample = origin + batch * self._global_batch() if origin else 0
        self._cfg.start_epoch, self._cfg.start_batch, self._cfg.start_echo = epoch, 0 if origin else batch, echo
        self._cfg.start_sample = sample
        size = self._sizes.reopened_at(epoch)
        if size is not None:  # the size in effect at EPOCH; the maximum stays the first open's
            if not (self._cfg.max_output_height or self._cfg.max_output_width):
                self._cfg.max_output_height, self._cfg.max_output_width = (self._info.max_output_height,
                                                                            self._info.max_output_width)
            self._cfg.output_height, self._cfg.output_width = size
        if before is None:
            self._file = file_identity(self.path)  # a reopen (next epoch, resume) must read this very file
        else:
            check_same_file(self.path, self._file, self._api_name)
        try:
            self._reader = open_reader(self.path, self._cfg, self._api_name)
        except H5packError:
            if before is not None:
                self._open_at(*before)
            raise
        self._info = _lib.Info()
        rc = lib().h5pack_info_get(self._reader, ctypes.byref(self._info))
        if rc < 0:
            raise reader_error(rc, self._reader, f"{self.path}: info")
        self._shape = self._sample_shape()
        self._pos, self._epochs_done, self._origin = batch * self._echo_factor + echo, epoch, (epoch, origin)
        self._deliveries = 0  # this reader's: _next_batch gives buffers back in its ring's order
        # a reopen (resume, set_epoch) continues this very file, whatever other readers hold meanwhile
        written = lib().h5pack_timeline_path(self._reader)
        if written:
            self._timeline_file = written  # kept alive while cfg points at it
            self._cfg.timeline_path, self._cfg.timeline_append = written, 1

    _ORDER_FIELDS = ("seed", "order", "batch_size", "world", "drop_last", "echo", "echo_mode", "crop",
                     "random_flip", "random_crop_padding", "scale_min", "scale_max", "ratio_min", "ratio_max",
                     "center_ratio", "output_height", "output_width", "patch_size")

    def _order_settings(self):
        """What the order and the draws depend on, by name, for the ranks' check (the window used, the file's
        size and sample count included): the fields of order_fingerprint a user sets."""
        s = {f: getattr(self._cfg, f) for f in self._ORDER_FIELDS if hasattr(self._cfg, f)}
        s.update(window=int(self._info.window), samples=int(self._info.n_samples),
                 file_bytes=(self._file or (None, None, None))[2])
        return s

    def _sample_shape(self, height=None, width=None):
        i = self._info
        h, w = height or i.output_height or i.height, width or i.output_width or i.width
        return (i.channels, h, w) if i.output_layout == 0 else (h, w, i.channels)

    # ---- iteration ----------------------------------------------------------------------------------

    def __len__(self):
        return int(self._info.batches_per_epoch * self._echo_factor)

    def _check_open(self):
        """ESTATE after close(): iterating, repositioning, resizing and stats need the reader (a closed
        loader is never reopened behind the caller's back)."""
        if self._reader is None:
            raise H5packError(_lib.ESTATE, f"{self.path}: the loader is closed")

    @property
    def _iterating(self):
        """An iterator of this loader exists and has not finished (it may not have started yet)."""
        it = self._live_iter() if self._live_iter is not None else None
        return it is not None and it.gi_frame is not None

    def __iter__(self):
        self._check_open()
        if self._iterating:
            raise RuntimeError(f"{self._api_name}: one iteration at a time (an earlier for loop or "
                               "iter() of this loader is still alive: zip(loader, loader) cannot work; finish or "
                               "drop it)")
        if not self._ranks_checked and self._torch_job:  # once: every rank of a torch.distributed job
            _resume.distributed_check(self._info.order_fingerprint, self.path, int(self._cfg.rank),  # must share
                                      int(self._cfg.world), self._order_settings())              # the order
            self._ranks_checked = True
        if self._pos and not self._restored:  # an earlier for stopped mid-epoch (break, a peek, an error):
            self._open_at(self._epochs_done + 1, 0, 0)  # like DataLoader, this for is a whole new epoch
        self._restored = False
        it = self._epoch_iter()
        self._live_iter = weakref.ref(it)
        return it

    def _epoch_iter(self):
        per_epoch = len(self)
        while self._pos < per_epoch:
            batch = self._next_batch()
            if batch is None:
                return
            self._pos += 1
            last = self._pos == per_epoch
            if last:
                self._pos, self._epochs_done = 0, self._epochs_done + 1
            yield batch
            del batch  # the generator's own reference would keep the batch "in use" (and copied)
            if last:
                return

    def _next_batch(self):
        self._check_open()  # closed inside the loop, or next() on an iterator of a closed loader
        size = self._sizes.due(self._epochs_done) if self._pos == 0 else None
        if size is not None:  # asked before the last reopen for this epoch: nothing of it is delivered yet
            rc = lib().h5pack_set_output_size(self._reader, *size)
            if rc < 0:
                raise reader_error(rc, self._reader,
                                   f"{self.path}: set_output_size({size}) for epoch {self._epochs_done}")
        _dlpack.sweep()  # exports the frameworks let go of since the last batch: their batches are unused
        self._give_back_unpinned()
        self._give_back_unused()
        # the buffer the next delivery takes must go back however few batches are held (e.g. the first
        # batch kept for a look at the end: it moves onto its own copy then)
        reused = self._reused_delivery()
        while self._held and (len(self._held) + len(self._pinned) >= self._keep or self._held[0].delivery <= reused):
            self._give_back(self._held.popleft())
        self._check_room()
        b = _lib.Batch()
        rc = lib().h5pack_next(self._reader, ctypes.byref(b))
        if rc == _lib.END:
            return None
        if rc < 0:
            raise reader_error(rc, self._reader, f"{self.path}: next batch")
        self._deliveries += 1
        if b.epoch != self._epochs_done:
            self._release(b)
            raise H5packError(_lib.EINTERNAL, f"{self.path}: batch of epoch {b.epoch} where epoch {self._epochs_done} "
                                              f"was expected (internal error)")
        self._follow_stream(consumer_waits=True)
        out, exporter = self._wrap(b)
        if self._copy:
            try:
                return (self._clone_images(out[0]),) + out[1:]  # labels and indices are copies already
            finally:
                del exporter
                self._release(b)
        self._held.append(_copy_on_hold.Held(b, out[0], exporter, self._deliveries - 1))
        return out

    def _give_back_unused(self):
        """Batches nothing references any more go back now, whatever keep says: no copy is needed."""
        for held in [h for h in self._held if h.unused()]:
            self._held.remove(held)
            self._release(held.batch)

    def _give_back(self, held):
        """The reader wants HELD's buffer: arrays the user still holds move off it first."""
        self._copies += held.images() is not None
        if self._move_held(held):
            self._release(held.batch)
        else:
            self._pinned.append(held)

    def _give_back_unpinned(self):
        for held in [h for h in self._pinned if not h.in_use()]:
            self._pinned.remove(held)
            self._release(held.batch)

    def _reused_delivery(self):  # whose buffer the next delivery takes: the ring refills in delivery order
        return self._deliveries - int(self._cfg.prefetch)

    def _check_room(self):
        """The reader fills a buffer only when the consumer holds at most prefetch - 1 of them."""
        prefetch = int(self._cfg.prefetch)
        if self._pinned and (len(self._held) + len(self._pinned) + 1 > prefetch - 1 or
                             min(h.delivery for h in self._pinned) <= self._reused_delivery()):
            raise RuntimeError(
                f"{self.path}: {len(self._pinned)} earlier batches are still read through views of their "
                f"images (e.g. images[0] kept in a list), which the loader cannot move off the reader's "
                f"{prefetch} buffers; keep {self._copy_call} of such views, keep the batch's images themselves "
                f"(they are copied when their buffer is needed), or pass copy=True")

    def _release(self, b):
        self._follow_stream(consumer_waits=False)
        rc = lib().h5pack_release(self._reader, ctypes.byref(b))
        if rc < 0:
            raise reader_error(rc, self._reader, f"{self.path}: release")

    def _wrap(self, b):
        """((images, labels[, indices]), exporter) for batch B."""
        dt = self._info.dtype
        sample = self._sample_shape(b.height, b.width)  # the size can change per epoch (set_output_size)
        expected = b.count * sample[0] * sample[1] * sample[2] * _lib.dtype_bytes(dt)
        if b.bytes != expected:
            raise H5packError(_lib.EINTERNAL, f"{self.path}: batch holds {b.bytes} bytes, expected {expected}")
        self._last_boxes = self._host_ints(_bytes_at(b.boxes, b.count * 5 * 4), "int32", (b.count, 5))
        self._last_where = (self._host_ints(_bytes_at(b.where, b.count * 3 * 8), "int64", (b.count, 3))
                            if b.where else None)
        images, exporter = self._images(b, (b.count,) + sample, None)
        out = (images, self._labels(b)) + self._masks(b)
        if not self._return_indices:
            return out, exporter
        return out + (self._host_ints(_bytes_at(b.indices, b.count * 8), "int64", (b.count,)),), exporter

    def _masks(self, b):
        """(masks,) with masks=: (B, H, W) uint8 or int64, a copy (like the labels: the images stay the
        reader's memory); () without."""
        if not b.masks:
            return ()
        dtype = "int64" if b.mask_dtype == _lib.MASK_DTYPES["int64"] else "uint8"
        return (self._host_copy(b.masks, b.mask_bytes, dtype, (b.count, b.height, b.width)),)

    def _host_copy(self, address, nbytes, dtype, shape):
        """A front-end's host array of SHAPE holding a copy of NBYTES at ADDRESS (each front-end may copy
        once, straight into its own array)."""
        return self._host_ints(_bytes_at(address, nbytes), dtype, shape)

    # ---- information and lifetime ----------------------------------------------------------------

    @property
    def info(self):
        """What the reader found and decided at open (h5pack_info) as a dict."""
        return _info_dict(self._info)

    @property
    def last_boxes(self):
        """(B, 5) int32 array of the latest batch: each image's crop box in the stored image and its flip,
        as columns y, x, height, width, flip (a copy: valid after the batch is released). None before the
        first batch."""
        return self._last_boxes

    @property
    def last_where(self):
        """Patches (``patch=S``): (B, 3) int64 array of the latest batch, each patch's (image, y, x): the
        top-left corner in its image (a copy). None before the first batch and for whole images."""
        return self._last_where

    def image_shape(self, i):
        """(height, width) of image I as stored (its own for images of several sizes and in tiles)."""
        self._check_open()
        h, w = ctypes.c_uint32(), ctypes.c_uint32()
        rc = lib().h5pack_image_shape(self._reader, int(i), ctypes.byref(h), ctypes.byref(w))
        if rc < 0:
            raise reader_error(rc, self._reader, f"{self.path}: image_shape({i})")
        return int(h.value), int(w.value)

    def set_output_size(self, size):
        """With a resizing crop: deliver SIZE (int or (h, w)) from the next epoch on (the epoch after the
        last batch yielded), at most max_output_size. Progressive resizing without reopening; a reopen
        into that epoch or a later one (the next ``for`` after a ``break``, ``set_epoch``) keeps it."""
        self._check_open()
        h, w = _params.output_size(size, "size")
        rc = lib().h5pack_set_output_size(self._reader, h, w)
        if rc < 0:
            raise reader_error(rc, self._reader, f"{self.path}: set_output_size({size!r})")
        # the library's rule: from the epoch after the last delivered batch's (the current one when the
        # loader stands at an epoch's start)
        self._sizes.asked(self._epochs_done + (1 if self._pos else 0), (h, w))

    @property
    def epoch(self):
        """The epoch the next batch belongs to: epochs completed since epoch 0 (across a resume too)."""
        return self._epochs_done

    # ---- resume (docs/python.md, "Resume") --------------------------------------------------------------

    @property
    def fingerprint(self):
        """h5pack_info.order_fingerprint as 16 hex digits: equal on every rank of one job, and between a
        run and its resume (rank, threads and prefetch do not enter it; the cache only through the chunk
        order's window, which it sizes when ``window`` is left out)."""
        return _resume.fingerprint_text(self._info.order_fingerprint)

    def _global_batch(self):
        return int(self._cfg.batch_size) * int(self._cfg.world)

    def _origin_now(self):
        """Where the current epoch's global batches start in its order (0 unless load_state_dict put it)."""
        return self._origin[1] if self._origin[0] == self._epochs_done else 0

    def _file_facts(self):
        return int(self._info.n_samples), (self._file or (None, None, None))[2]

    def state_dict(self):
        """Where the stream stands: the position of the NEXT batch to deliver, as this job's (epoch, batch,
        echo) and as the position of its first sample in the epoch's order with this job's global batch
        (batch_size x world), the fingerprint and the settings it hashes, the file's size, and a check
        value, as plain JSON-serialisable data. Save it with the model's; any rank's will do (every rank
        stands at the same global position)."""
        e = self._echo_factor
        batch, echo = self._pos // e, self._pos % e
        sample = self._origin_now() + batch * self._global_batch()
        return _resume.make_state((self._epochs_done, batch, echo, sample), self._info.order_fingerprint,
                                  _resume.settings(self._cfg, self._info),
                                  (int(self._cfg.world), int(self._cfg.batch_size)), self._file_facts())

    def load_state_dict(self, state_dict):
        """Continues the stream saved by state_dict(), in this job's world: the next ``for`` yields the rest
        of the interrupted epoch, later loops the following epochs. With the saving job's global batch
        (batch_size x world, however split) the very batches, augmentation and echoes the uninterrupted run
        would have; with another, the rest of that epoch's order shared among this job's ranks (each sample
        once in the epoch), then this job's own epochs. ValueError when the state is damaged or edited,
        of another file or format, or saved with other order settings (it names them); the loader stays
        where it was. Reopens the reader: batches held from this loader become invalid; stats() go on
        counting."""
        self._check_open()
        if self._iterating:
            raise RuntimeError(f"{self._api_name}.load_state_dict: not while a for loop over the loader runs")
        epoch, sample, echo, saved_g = _resume.check_state(
            state_dict, self._info.order_fingerprint, _resume.settings(self._cfg, self._info), self._file_facts(),
            self._echo_factor, self.path, elastic=not self._cfg.patch_size)
        if self._cfg.patch_size:  # patches resume in the same world (the fingerprint holds it): their batch
            self._open_at(epoch, state_dict["batch"], echo)
        else:
            g, n = self._global_batch(), int(self._info.n_samples)
            epoch, sample, echo = _resume.elastic_start(epoch, sample, echo, saved_g, g, n)
            start = _resume.start_of(sample, n, g, int(self._info.batches_per_epoch), bool(self._cfg.drop_last))
            if start is None and epoch >= _convert._U64_MAX:
                raise ValueError(f"{self.path}: state dict epoch {epoch}: nothing is left of it, and no epoch follows")
            if start is None:  # nothing of that epoch is left: the next one from its start
                self._open_at(epoch + 1, 0, 0)
            else:
                self._open_at(epoch, start[0], echo, start[1])
        self._restored = True

    def set_epoch(self, epoch):
        """DistributedSampler's convention: the next ``for`` runs epoch EPOCH from its first batch. When the
        loader already stands in that epoch at its start, or mid-way after load_state_dict, nothing
        changes, so calling set_epoch(e) before each epoch also works after a resume; otherwise (another
        epoch, or this one left mid-way by a ``break``) the reader reopens at the epoch's first batch
        (stats() go on counting)."""
        epoch = _convert.int_option(epoch, "set_epoch: epoch", 0, _convert._U64_MAX)
        self._check_open()
        if self._iterating:
            raise RuntimeError(f"{self._api_name}.set_epoch: not while a for loop over the loader runs")
        if epoch != self._epochs_done or (self._pos and not self._restored):
            self._open_at(epoch, 0, 0)

    def stats_struct(self):
        self._check_open()
        s = _lib.Stats()
        rc = lib().h5pack_stats_get(self._reader, ctypes.byref(s))
        if rc < 0:
            raise reader_error(rc, self._reader, f"{self.path}: stats")
        return s

    # h5pack_stats fields that describe the reader now rather than count: not summed over reopens
    _STATE_STATS = ("hit_rate", "read_amplification", "stall_fraction", "cache_bytes_used", "device_bytes")

    def stats(self):
        """Counters (h5pack_stats) as a dict since the Loader was made, summed over the readers that
        load_state_dict / set_epoch opened; hit_rate, read_amplification and stall_fraction (stall_s /
        elapsed_s) of those sums. stats_struct() is the current reader's own h5pack_stats."""
        d = _struct_dict(self.stats_struct())
        for k, v in self._stats_before.items():
            if k not in self._STATE_STATS:
                d[k] += v
        uses = d["chunk_hits"] + d["chunk_misses"]
        d["hit_rate"] = d["chunk_hits"] / uses if uses else 0.0
        d["read_amplification"] = d["bytes_read"] / d["bytes_needed"] if d["bytes_needed"] else 0.0
        d["stall_fraction"] = d["stall_s"] / d["elapsed_s"] if d["elapsed_s"] > 0 else 0.0
        return d

    def _before_close(self, held):
        """Called by close() after the held batches moved off the reader's memory (the GPU front-ends
        wait there for their copies)."""

    def close(self):
        """Closes the reader. Batch arrays the user still holds keep their values (moved off the reader's
        memory first); if views still read the reader's memory, its release waits until they are gone.
        Safe to call twice; also done by ``with`` and by garbage collection."""
        if self._reader is None:
            return
        _dlpack.sweep()
        held = list(self._held) + self._pinned
        in_use = [h.exporter() for h in held if not self._move_held(h)]
        reader, self._reader = self._reader, None
        self._held.clear(), self._pinned.clear()  # h5pack_close frees unreleased batches too
        self._before_close(held)
        if in_use:
            _copy_on_hold.DeferredClose(reader, [e for e in in_use if e is not None], loaded)
        else:
            lib().h5pack_close(reader)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # Loaders open at exit were closed by _copy_on_hold.close_live (atexit, frameworks whole); in
        # finalisation a framework may be half torn down (moving a held batch then crashed): the process is
        # ending, its memory goes with it.
        if getattr(self, "_reader", None) is not None and loaded() is not None and not sys.is_finalizing():
            self.close()

    def __repr__(self):
        i = self._info
        return (f"{self._api_name}({self.path!r}, samples={i.n_samples}, shape={self._shape}, "
                f"batches_per_epoch={len(self)}, device={i.device_name.decode(errors='replace')!r})")


def _bytes_at(address, nbytes):
    """NBYTES copied from host memory at ADDRESS (b"" for NULL)."""
    return ctypes.string_at(address, nbytes) if address and nbytes else b""


def _free_detached(handle, loaded=loaded):  # bound now: at interpreter exit the module's names may be gone
    library = loaded()
    if library is not None:
        library.h5pack_detached_free(handle)

