"""Copy-on-hold: batches stay zero-copy while the user lets them go, and keep their values when the user
holds them (docs/python.md, "Zero copy"). Shared by every front-end; how a held batch moves off the reader's
memory is the front-end's (_stream.Stream._move_held).

Every delivered image tensor is watched through two weak references: to the tensor itself, and to the
exporter of the reader's memory (the ctypes buffer or CUDA array interface object that its storage keeps
alive). When the reader needs the buffer back (the next batch, close, a reopen):
  - the array still exists: PyTorch moves the tensor onto a private copy in place (Tensor.set_ with a
    clone, on the current stream on the GPU); NumPy, JAX and TensorFlow arrays, which cannot move, take
    the memory itself from the reader (h5pack_detach: no copy, the reader's ring gets new memory);
  - the exporter still exists after that: some other tensor (a view such as images[0]) still reads the
    reader's memory, which cannot be moved: the buffer is not given back until that view is gone
    (pinned), and the loader raises when pinned buffers would leave the reader without one to fill.
"""
import atexit
import weakref

LIVE = weakref.WeakSet()  # open loaders, closed at exit by close_live


@atexit.register
def close_live():
    """At interpreter exit, before finalisation: every loader still open is closed as close() does (its
    timeline's last partial interval written; held batches moved off its memory while the frameworks are
    intact)."""
    for loader in list(LIVE):
        try:
            loader.close()
        except Exception:  # noqa: BLE001 - exiting anyway: one loader's failure must not stop the others
            pass


class Held:
    """A delivered batch (the C struct) and weak references to its image tensor and memory exporter."""

    __slots__ = ("batch", "images", "exporter", "delivery")

    def __init__(self, batch, images, exporter, delivery):
        self.batch = batch
        self.delivery = delivery  # its number among the reader's deliveries: the ring reuses buffers in order
        self.images = weakref.ref(images)
        self.exporter = weakref.ref(exporter)

    def unused(self):
        """True when neither the image tensor nor any view of the reader's memory is left."""
        return self.images() is None and self.exporter() is None

    def in_use(self):
        """True while a view still reads the reader's memory (after the front-end's move)."""
        return self.exporter() is not None



class DeferredClose:
    """Closes READER (with the library LIB_OF() returns) once the last of EXPORTERS, memory that views
    still read after close(), is gone."""

    def __init__(self, reader, exporters, lib_of):
        self.reader, self.left, self.lib_of = reader, len(exporters), lib_of
        for e in exporters:
            weakref.finalize(e, self._one_gone)

    def _one_gone(self):
        self.left -= 1
        lib = self.lib_of()
        if self.left == 0 and lib is not None:
            lib.h5pack_close(self.reader)
