"""h5py's read-only S3 driver (ros3, in Debian's HDF5 1.10.8) over the same server: the baseline of
http_vs_disk.py, which runs it as `rangeserver.py DIR --latency=MS -- python3 h5py_ros3.py NAME BATCH`
(h5py holds the GIL during HDF5 calls: the server must be another process). Reads batches of BATCH images
in file order, h5py's best case (one range request per chunk, one at a time); prints one JSON line.

usage: h5py_ros3.py NAME BATCH   (with H5PACK_TEST_URL set by rangeserver.py)"""
import json
import os
import sys
import time

import h5py

url = os.environ["H5PACK_TEST_URL"] + sys.argv[1]
batch = int(sys.argv[2])
if not h5py.get_config().ros3:
    print(json.dumps({"error": "this h5py has no ros3 driver"}))
    sys.exit(0)
t0 = time.perf_counter()
with h5py.File(url, "r", driver="ros3") as f:
    d = f["images"]
    n, first, t1 = 0, None, None
    for i in range(0, d.shape[0], batch):
        x = d[i:i + batch]
        if first is None:
            t1 = time.perf_counter()
            first = t1 - t0
        else:
            n += x.shape[0]
    rate = n / (time.perf_counter() - t1)
print(json.dumps({"rate": rate, "first": first}))
