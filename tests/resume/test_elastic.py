"""Elastic resume (issue 43) on the CPU, with ranks as processes: a job of 4 ranks (h5pack.numpy.Loader,
batch 64: a global batch of 256) over 100,000 small images saves its state (rank 3's) at the first batch,
mid-chunk, mid-echo (echo 2) and before the last batch of an epoch; each state is resumed by jobs of 1, 2,
3, 4 and 6 ranks (processes). Checked: the interrupted epoch delivers every sample once across the change
(the new job's padding aside); with the global batch kept (1 x 256, 2 x 128, 4 x 64) the very global
batches of the uninterrupted job, draws included; the epoch after is the new job's own. Then the same
under torchrun with gloo (h5pack.Loader, rank and world from torch.distributed): 4 processes, then 2
(elastic_ddp.py). Usage: test_elastic.py"""
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile

import h5test
from h5test import check

try:
    import h5py  # noqa: F401
    import numpy as np
except ImportError as e:
    h5test.skip(f"{e} (install python3-h5py and python3-numpy)")

import elastic_common as ec

BASE_WORLD, BASE_BATCH = 4, 64
G = BASE_WORLD * BASE_BATCH
BPE = -(-ec.N // G)  # 391 global batches, the last holding 160 samples
# each new world with the batch that keeps the global batch when it divides it, else the base's
WORLDS = [(1, 256), (2, 128), (3, 64), (4, 64), (6, 64)]


def rank_task(args):
    """One rank (a process of its own): opens, loads STATE when given, records the rest of the epoch, then
    checks the next epoch's first batches against a loader set to that epoch (its own epochs)."""
    path, rank, world, batch, extra, state, save_after = args
    import h5pack.numpy as hn

    with hn.Loader(path, batch_size=batch, rank=rank, world=world, **ec.SETTINGS, **extra) as ld:
        if state is not None:
            ld.load_state_dict(json.loads(state))  # as read back from a checkpoint
        out = ec.record(ld, save_after=save_after)
        out["states"] = {k: json.dumps(v) for k, v in out["states"].items()}
        if state is not None:
            following = ec.record(ld, limit=3)
            with hn.Loader(path, batch_size=batch, rank=rank, world=world, **ec.SETTINGS, **extra) as own:
                own.set_epoch(following["positions"][0][0])
                theirs = ec.record(own, limit=3)
            out["next_epoch_own"] = all(np.array_equal(a, b) for a, b in zip(following["hashes"], theirs["hashes"])) \
                and following["positions"] == theirs["positions"]
    return out


def run_job(pool, path, world, batch, extra, state=None, save_after=()):
    tasks = [(path, r, world, batch, extra, state, save_after) for r in range(world)]
    return pool.map(rank_task, tasks)


def check_resumed(base, state, ranks, world, batch, what):
    """RANKS (a job of WORLD x BATCH) resumed BASE (the uninterrupted 4 x 64 job) at STATE."""
    g = world * batch
    resumed = ec.global_batches(ranks)
    done = ec.global_batches(base)[:base[0]["positions"].index((state["epoch"], state["batch"], state["echo"]))]
    if g == G:  # the global batch kept: the uninterrupted job's suffix
        suffix = ec.global_batches(base)[len(done):]
        diff = ec.same_global_batches(suffix, resumed, BPE, G)
        check(diff is None, f"{what}: the global batches of the uninterrupted job ({diff})")
    # the interrupted batch's fresh delivery came before the state (a job of another global batch leaves
    # its remaining echoes); the new job's last batch may repeat up to world - 1 samples (its padding)
    diff = ec.each_once(done + resumed, padding_allowed=world - 1)
    check(diff is None, f"{what}: each sample once in the epoch ({diff})")
    check(all(r["next_epoch_own"] for r in ranks), f"{what}: the next epoch is the new job's own")


def elastic_processes(pool, path, tmp):
    configs = {
        # name: (loader settings, deliveries after which states are saved, named)
        "echo 1": ({}, {1: "the first batch", 123: "mid-chunk", BPE - 1: "the last batch"}),
        "batch echo 2": ({"echo": 2}, {2 * 57 + 1: "mid-echo"}),
    }
    for name, (extra, saves) in configs.items():
        base = run_job(pool, path, BASE_WORLD, BASE_BATCH, extra, save_after=tuple(saves))
        diff = ec.each_once(ec.global_batches(base), padding_allowed=0)
        check(diff is None, f"{name}: the uninterrupted 4-rank job, each sample once ({diff})")
        for after, where in saves.items():
            state_text = base[3]["states"][after]  # any rank's: the last one's here
            check(all(r["states"][after] == state_text for r in base), f"{name}: every rank saves the same state")
            state = json.loads(state_text)
            for world, batch in WORLDS:
                ranks = run_job(pool, path, world, batch, extra, state=state_text)
                check_resumed(base, state, ranks, world, batch, f"{name}, saved at {where}, resumed by {world} x {batch}")


def torchrun(tmp, nproc, phase):
    env = dict(os.environ, GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "elastic_ddp.py")
    # --redirects/--tee: Debian's torch 1.13 under Python 3.11 parses their default "0" to None and fails
    # (an IntFlag's 0 is no member when iterated); rank 0's stderr to its log and the console works alike
    p = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
                        "--redirects", "0:2", "--tee", "0:2", script, tmp, phase], env=env, capture_output=True,
                       text=True, timeout=240)
    check(p.returncode == 0, f"torchrun {nproc} processes ({phase}): exit {p.returncode}\n{p.stdout[-3000:]}\n"
                             f"{p.stderr[-3000:]}", fatal=True)


def saved_record(path):
    """A record elastic_ddp.py saved (flat arrays) as ec.record gives it."""
    d = np.load(path)
    ends = np.cumsum(d["lengths"])
    return {"positions": [tuple(p) for p in d["positions"].tolist()], "rows": np.split(d["rows"], ends[:-1]),
            "hashes": np.split(d["hashes"], ends[:-1])}


def under_torchrun(tmp):
    try:
        import torch.distributed as dist
    except ImportError as e:
        print(f"torchrun part skipped: {e}")
        return
    if not dist.is_available() or not dist.is_gloo_available():
        print("torchrun part skipped: torch.distributed with gloo is not available")
        return
    torchrun(tmp, 4, "save")
    torchrun(tmp, 2, "load")
    base = [saved_record(os.path.join(tmp, f"save.{r}.npz")) for r in range(4)]
    resumed = [saved_record(os.path.join(tmp, f"load.{r}.npz")) for r in range(2)]
    with open(os.path.join(tmp, "state.json")) as f:
        state = json.load(f)
    done = ec.global_batches(base)[:state["batch"]]
    diff = ec.same_global_batches(ec.global_batches(base)[state["batch"]:], ec.global_batches(resumed), BPE, G)
    check(diff is None, f"torchrun 4 -> 2 processes: the same global batches ({diff})")
    diff = ec.each_once(done + ec.global_batches(resumed))
    check(diff is None, f"torchrun 4 -> 2 processes: each sample once ({diff})")


def main():
    with tempfile.TemporaryDirectory(prefix="h5pack_elastic_") as tmp:
        path = os.path.join(tmp, "data.h5")
        ec.write_file(path)
        with multiprocessing.get_context("spawn").Pool(min(4, os.cpu_count() or 1)) as pool:
            elastic_processes(pool, path, tmp)
        under_torchrun(tmp)
    h5test.finish("elastic resume: 4 ranks resumed by 1, 2, 3, 4 and 6 at 4 positions, each sample once, the same "
                  "global batches for the same global batch; torchrun 4 -> 2")


if __name__ == "__main__":
    main()
