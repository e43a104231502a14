"""The one warning a Loader gives at open: a cache too small for the chunk order to shuffle well.

With window=0 the chunk order's window follows the cache (docs/reader.md, "Any cache works"): a cache of a
few chunks leaves a window of one or two, and each stretch of batches then comes from those chunks alone
(on CIFAR-10 with cache="2M", a batch of epoch 2 shares ~215 of its 256 images with some batch of epoch 1).
Reading stays optimal, so nothing else would tell the user."""
import warnings

from . import _lib

WINDOW_WANTED = 16  # chunks the order should mix at least (docs/reader.md)


class ShuffleWarning(UserWarning):
    """The chunk order mixes fewer chunks than it should: the message names the cache that keeps the window."""


def _mib(nbytes):
    return f"{-(-nbytes // (1 << 20))}M"


def cache_for_window(info, batch_size, window=WINDOW_WANTED):
    """Bytes of cache whose derived window is WINDOW chunks: the window plus the chunks a batch may start
    (reader/plan/resolve.c, h5pack_reader_derived_window)."""
    k = max(1, int(info.samples_per_chunk))
    started = -(-int(batch_size) // k) + 1
    return (window + started) * int(info.chunk_bytes)


def warn_if_narrow(info, cfg, path, cache_text, stacklevel=4):
    """Warns once (for this open) when the derived window is under WINDOW_WANTED chunks of a larger file."""
    wanted = min(WINDOW_WANTED, int(info.n_chunks))
    if (cfg.window or cfg.patch_size or int(cfg.order) != _lib.ORDERS["chunk"] or int(info.window) >= wanted):
        return
    need = cache_for_window(info, cfg.batch_size, wanted)
    warnings.warn(f"{path}: cache={cache_text} leaves the chunk order a window of {int(info.window)} chunk(s) "
                  f"({wanted} wanted): consecutive batches come from the same few chunks and shuffling is weak. "
                  f"cache=\"{_mib(need)}\" or more mixes {wanted} chunks (each chunk is still read once per epoch); "
                  f"order=\"random\" shuffles fully at the cost of re-reads; window= set explicitly silences this.",
                  ShuffleWarning, stacklevel=stacklevel)
