"""Run by test_elastic.py under torchrun (gloo): h5pack.Loader with rank and world from torch.distributed.
Usage: elastic_ddp.py DIR save|load
  save  (4 processes, batch 64) the whole of epoch 0, each rank's record in DIR/save.RANK.npz; the state
        after delivery 100 (rank 3's: any will do) in DIR/state.json
  load  (2 processes, batch 128: the same global batch) that state, the rest of epoch 0 in DIR/load.RANK.npz"""
import json
import os
import sys

import numpy as np
import torch.distributed as dist

import elastic_common as ec
import h5pack

SAVE_AFTER = 100


def save(path, rec):
    """REC as flat arrays (each delivery's rows and hashes one after the other, and their lengths)."""
    np.savez(path, positions=np.array(rec["positions"], dtype=np.int64).reshape(-1, 3),
             lengths=np.array([len(r) for r in rec["rows"]], dtype=np.int64),
             rows=np.concatenate(rec["rows"]), hashes=np.concatenate(rec["hashes"]))


def main():
    out, phase = sys.argv[1], sys.argv[2]
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    batch = 256 // world
    # no rank= or world=: the job's; the first for checks that every rank's order agrees (a collective)
    with h5pack.Loader(os.path.join(out, "data.h5"), batch_size=batch, **ec.SETTINGS) as ld:
        if phase == "load":
            with open(os.path.join(out, "state.json")) as f:
                ld.load_state_dict(json.load(f))
        rec = ec.record(ld, save_after=(SAVE_AFTER,) if phase == "save" else ())
    save(os.path.join(out, f"{phase}.{rank}.npz"), rec)
    if phase == "save" and rank == world - 1:
        with open(os.path.join(out, "state.json"), "w") as f:
            json.dump(rec["states"][SAVE_AFTER], f)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
