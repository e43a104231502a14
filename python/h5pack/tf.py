"""h5pack.tf.dataset: an h5pack stream as a tf.data.Dataset for Keras' model.fit and custom loops, one
reader per input pipeline (tf.distribute's InputContext), batches handed to TensorFlow through DLPack
without a copy (docs/frameworks.md).

    strategy = tf.distribute.MirroredStrategy()
    ds = strategy.distribute_datasets_from_function(
        lambda ctx: h5pack.tf.dataset("train.h5", batch_size=ctx.get_per_replica_batch_size(256),
                                      input_context=ctx, crop="random_resized", output_size=224, flip=True))
    model.fit(ds, epochs=10, steps_per_epoch=...)
"""
import threading

from . import _dlpack
from .numpy import batch_labels, host_ints, host_only, numpy_dtype
from ._core import framework
from ._stream import Stream


def _tf():
    return framework("tensorflow", "h5pack.tf", "pip install tensorflow-cpu (or tensorflow)")


class _TFStream(Stream):
    """One reader whose images become tf.Tensors over its memory."""

    _framework = "h5pack.tf.dataset"

    def _set_device(self, cfg, device):
        host_only(cfg, device, self._framework)

    def _images(self, b, shape, strides):
        memory = _dlpack.Memory(b.data, shape, numpy_dtype(self._info.dtype), (_dlpack.KDL_CPU, 0), self)
        return _tf().experimental.dlpack.from_dlpack(memory.__dlpack__()), memory

    def _host_ints(self, raw, dtype, shape):
        return host_ints(raw, dtype, shape)

    def _labels(self, b):
        return batch_labels(b, self._info)

    def _clone_images(self, images):
        return _tf().identity(images)


def _element_spec(tf, stream, with_indices):
    """(images, labels[, indices]) TensorSpecs: images of the reader's dtype and layout; the batch axis is
    None (the last batch of an epoch may be short)."""
    info = stream._info
    images = tf.TensorSpec((None,) + tuple(int(n) for n in stream._shape), tf.as_dtype(numpy_dtype(info.dtype).name))
    spec = [images]
    if info.has_labels:
        k = max(int(info.label_columns), 1)
        shape = (None, k) if info.label_rank == 2 else (None,)
        spec.append(tf.TensorSpec(shape, tf.float32 if info.labels_are_float else tf.int64))
    if with_indices:
        spec.append(tf.TensorSpec((None,), tf.int64))
    return tuple(spec)


def dataset(path, input_context=None, batch_size=256, rank=None, world=None, device="cpu", with_indices=False,
            **kwargs):
    """A tf.data.Dataset of ``(images, labels)`` (``indices`` last with ``with_indices=True``; images only
    for a file without labels): each iteration over it (each Keras epoch) is the stream's next epoch. The
    keywords of h5pack.Loader apply (but memory_format); ``input_context`` (a tf.distribute.InputContext)
    makes this the share of input pipeline ``ctx.input_pipeline_id`` of ``ctx.num_input_pipelines``, each
    sample once per epoch across them. The reader is opened now (errors in the path or the options are
    raised here, not inside TensorFlow) and closed with the dataset's last reference."""
    tf = _tf()
    if "memory_format" in kwargs:
        raise ValueError("h5pack.tf.dataset: memory_format= is PyTorch's; use layout='nhwc' (Keras' default "
                         "channels_last) for (B, H, W, C) images")
    if input_context is not None:
        if rank is not None or world is not None:
            raise ValueError("h5pack.tf.dataset: give input_context= or rank=/world=, not both")
        rank, world = input_context.input_pipeline_id, input_context.num_input_pipelines
    stream = _TFStream(path, batch_size=batch_size, rank=rank, world=world, device=device,
                       with_indices=with_indices, **kwargs)
    spec = _element_spec(tf, stream, with_indices)
    lock = threading.Lock()  # tf.data may start a new iteration before dropping the last one's generator

    def epochs():
        with lock:
            for parts in stream:
                yield tuple(p for p in parts if p is not None)

    ds = tf.data.Dataset.from_generator(epochs, output_signature=spec)
    ds.h5pack_stream = stream  # the reader lives as long as the dataset (its stats(), state_dict(), close())
    return ds


def stream_of(ds):
    """The h5pack stream behind a dataset made by dataset() (for stats(), state_dict(), set_epoch())."""
    return ds.h5pack_stream
