"""One process feeding several devices: one reader per shard of the global batch, each with its own ring
and threads (docs/frameworks.md, "Several devices"). Shard s of process p is the reader of rank
p * S + s in a world of P * S (S shards per process): across devices and processes every sample comes once
per epoch, and the split needs nothing from the library but rank and world. The cache and the threads
the user gave are the process's: each shard's reader gets its share."""
import os

from ._convert import parse_size

KEYWORDS_SET_HERE = ("rank", "world", "batch_size")


def share(kwargs, shards, batch_size):
    """The keywords of one shard's reader: batch_size / shards, cache and threads divided."""
    if batch_size % shards:
        raise ValueError(f"batch_size={batch_size} does not divide among {shards} devices: give a batch_size "
                         f"that is a multiple of {shards} (each device gets batch_size / {shards})")
    for bad in KEYWORDS_SET_HERE:
        if bad in kwargs:
            raise ValueError(f"{bad}= is set per device by the loader with several devices (rank = process x "
                             f"devices + device); leave it out")
    out = dict(kwargs, batch_size=batch_size // shards)
    cache = kwargs.get("cache", "1G")
    total = parse_size(cache) if isinstance(cache, str) else int(cache)
    out["cache"] = max(1, total // shards)
    threads = kwargs.get("threads")
    out["threads"] = max(1, (int(threads) if threads else (os.cpu_count() or 1)) // shards)
    return out


def rank_world(process, processes, shard, shards):
    return process * shards + shard, processes * shards
