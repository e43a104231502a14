"""h5pack.Loader under torch.distributed: 2 processes (torch.multiprocessing.spawn, gloo backend, a file://
store in a temp dir). Ranks with different threads and caches that both hold the file agree on the order
fingerprint and iterate (disjoint shares of the epoch); so do ranks that give no rank and world at all
(taken from torch.distributed), and, without torch.distributed, processes given $RANK and $WORLD_SIZE as
torchrun sets them; explicit rank/world win, and a loader of its own (world=1: each rank its own seed, or
rank 0 validating alone while rank 1 waits at a barrier) joins no collective. A rank opened with another seed, or with a cache that sizes
another chunk-order window, makes the first for loop raise RuntimeError on every rank, naming the ranks."""
import json
import os
import sys
import tempfile

try:
    import h5py
    import numpy as np
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
except ImportError as e:  # pragma: no cover
    print(f"skipped: {e}")
    sys.exit(77)

import h5pack

WORLD = 2


def write_file(path):
    rng = np.random.default_rng(3)
    with h5py.File(path, "w") as f:
        f.create_dataset("images", data=rng.integers(0, 256, size=(40, 3, 4, 4), dtype=np.uint8),
                         chunks=(4, 3, 4, 4))
        f.create_dataset("labels", data=np.arange(40) % 5)


def worker(rank, tmp, case):
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", init_method=f"file://{os.path.join(tmp, case + '.store')}", rank=rank,
                            world_size=WORLD)
    out = {"rank": rank}
    try:
        seed = 6 if case == "differ" and rank == 1 else 5
        kw = dict(threads=1, cache="1M") if rank == 0 else dict(threads=2, cache="64M", prefetch=6)
        if case == "implicit":  # no rank, no world: the job's
            kw = dict(threads=1 + rank)
        elif case == "cache":  # one chunk (192 bytes) of cache: a window of 1, not the file's 10
            kw = dict(cache="1K" if rank == 0 else "1M", rank=rank, world=WORLD)
        elif case == "same_rank":  # rank=LOCAL_RANK on one-GPU nodes by mistake: both ranks say rank 0
            kw = dict(rank=0, world=WORLD)  # both join the check (neither hangs) and both are told
        elif case in ("explicit", "alone"):  # rank/world given win over the job's: the whole epoch
            kw, seed = dict(rank=0, world=1), 5 + rank  # each its own order: no collective compares them
        else:
            kw.update(rank=rank, world=WORLD)
        if case == "alone" and rank == 1:  # validation on rank 0 alone while rank 1 waits at a barrier
            dist.barrier()
            return
        with h5pack.Loader(os.path.join(tmp, "data.h5"), batch_size=4, device="cpu", seed=seed,
                           with_indices=True, copy=True, **kw) as ld:
            out["fingerprint"] = ld.fingerprint
            try:
                out["rows"] = sorted(int(i) for _, _, idx in ld for i in idx)
                for _ in ld:  # the check runs once: the second loop works without another collective
                    break
            except RuntimeError as e:
                out["error"] = str(e)
        if case == "alone":
            dist.barrier()
    finally:
        with open(os.path.join(tmp, f"{case}.{rank}.json"), "w") as f:
            json.dump(out, f)
        dist.destroy_process_group()


def env_ranks(tmp):
    """Without torch.distributed: $RANK / $WORLD_SIZE (torchrun's) pick each process's share."""
    rows = []
    for rank in range(WORLD):
        os.environ["RANK"], os.environ["WORLD_SIZE"] = str(rank), str(WORLD)
        try:
            with h5pack.Loader(os.path.join(tmp, "data.h5"), batch_size=4, device="cpu", seed=5,
                               with_indices=True, copy=True) as ld:
                rows.append(sorted(int(i) for _, _, idx in ld for i in idx))
        finally:
            del os.environ["RANK"], os.environ["WORLD_SIZE"]
    for env, words in (({"RANK": "1"}, "$WORLD_SIZE is not"), ({"WORLD_SIZE": "0"}, "$WORLD_SIZE=0")):
        os.environ.update(env)  # a half-set or impossible job environment says which variable is wrong
        try:
            h5pack.Loader(os.path.join(tmp, "data.h5"), batch_size=4, device="cpu")
            raise AssertionError(f"{env}: accepted")
        except ValueError as e:
            assert words in str(e), (env, str(e))
        finally:
            for k in env:
                del os.environ[k]
    try:  # rank= alone, no job: the world of 1 it would get is named
        h5pack.Loader(os.path.join(tmp, "data.h5"), batch_size=4, device="cpu", rank=1)
        raise AssertionError("rank=1 without a world: accepted")
    except ValueError as e:
        assert "rank=1 needs world=" in str(e), str(e)
    return rows


def run(tmp, case):
    mp.spawn(worker, args=(tmp, case), nprocs=WORLD, join=True)
    results = []
    for r in range(WORLD):
        with open(os.path.join(tmp, f"{case}.{r}.json")) as f:
            results.append(json.load(f))
    return results


def main():
    if not dist.is_available() or not dist.is_gloo_available():
        print("skipped: torch.distributed with gloo is not available")
        return 77
    with tempfile.TemporaryDirectory(prefix="h5pack_dist_") as tmp:
        write_file(os.path.join(tmp, "data.h5"))
        ok = run(tmp, "agree")
        assert all("error" not in r for r in ok), ok
        assert ok[0]["fingerprint"] == ok[1]["fingerprint"], ok
        assert len(ok[0]["rows"]) == len(ok[1]["rows"]) == 20, ok
        assert sorted(ok[0]["rows"] + ok[1]["rows"]) == list(range(40)), "the ranks' shares cover the epoch once"
        implicit = run(tmp, "implicit")
        assert all("error" not in r for r in implicit), implicit
        assert implicit[0]["fingerprint"] == ok[0]["fingerprint"], "rank/world from the job = given explicitly"
        assert sorted(implicit[0]["rows"] + implicit[1]["rows"]) == list(range(40)), implicit
        assert len(implicit[0]["rows"]) == 20, "each rank took half of the epoch"
        explicit = run(tmp, "explicit")
        assert all(r.get("rows") == list(range(40)) for r in explicit), "rank=0, world=1 given: the whole epoch"
        alone = run(tmp, "alone")  # before: rank 0 hung in the fingerprint collective rank 1 never joined
        assert alone[0].get("rows") == list(range(40)) and "error" not in alone[0], alone
        same = run(tmp, "same_rank")  # a rule that looked at the rank sent only rank 0 into the collective
        assert all("ranks [0, 1] all opened rank=0" in r.get("error", "") for r in same), same
        env = env_ranks(tmp)
        assert env[0] == ok[0]["rows"] and env[1] == ok[1]["rows"], "$RANK/$WORLD_SIZE gave other shares"
        small = run(tmp, "cache")
        assert small[0]["fingerprint"] != small[1]["fingerprint"], small
        assert all("orders differ" in r.get("error", "") for r in small), small
        assert all("Differing: window: ranks [0] 3, ranks [1] 10." in r["error"]
                   for r in small), small  # the error names the settings that differ, with each rank's value
        bad = run(tmp, "differ")
        assert bad[0]["fingerprint"] != bad[1]["fingerprint"], bad
        for r in bad:
            assert "rows" not in r, f"rank {r['rank']} iterated despite the mismatch"
            msg = r.get("error", "")
            assert "orders differ" in msg and "ranks [0]" in msg and "ranks [1]" in msg, msg
            assert f"rank {r['rank']} disagrees with ranks [{1 - r['rank']}]" in msg, msg
            assert "Differing: seed: ranks [0] 5, ranks [1] 6." in msg, msg
    print("ranks agree with different threads/caches and with rank/world from the job (torch.distributed or "
          "$RANK/$WORLD_SIZE); another seed or a cache that sizes another window raises on every rank")
    return 0


if __name__ == "__main__":
    sys.exit(main())
