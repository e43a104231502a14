"""The soak of issue 41, short: bench/soak/soak.py's run() for 40 cycles on tiny files, in this process,
over every read path (mapped, pread, old format, gzip, several sizes, tiles, random resized crops, batch and
sample echo), both front-ends (PyTorch and NumPy), early breaks, 1-4 threads, kept batches and views past
the close, resumes into the same and a new loader. Checks: no exception in any cycle, kept batches and
views unchanged, every resumed batch equal to the interrupted run's, descriptors and threads flat after a
warm-up of 10 cycles (no cycle ends with more than it began with), no child process left, and RSS less the
kept batches bounded (the last 10 cycles' mean at most 24 MiB above cycles 10..19's; not checked under an
ASan preload, whose quarantine holds freed memory on purpose).

usage: /usr/bin/python3 test_soak.py H5PACK (H5PACK-GEN-IMAGES | pil)
"""
import importlib.util
import os
import sys
import tempfile

import h5test
from h5test import check

try:
    import h5py  # noqa: F401
    import numpy  # noqa: F401
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover
    h5test.skip(f"needs h5py, numpy and torch ({e})")

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "..", "bench", "soak", "soak.py")


def main():
    spec = importlib.util.spec_from_file_location("soak", BENCH)
    soak = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(soak)
    asan = "asan" in os.environ.get("LD_PRELOAD", "")
    with tempfile.TemporaryDirectory(prefix="h5pack-soak-test-") as tmp:
        argv = ["--cycles", "40", "--warmup", "10", "--window", "10", "--small", "--quiet", "--dir", tmp,
                "--h5pack", sys.argv[1], "--gen-images", sys.argv[2], "--max-rss-growth", "1e9" if asan else "24"]
        if os.environ.get("H5PACK_LIBRARY"):
            argv += ["--lib", os.environ["H5PACK_LIBRARY"]]
        s = soak.run(argv)
    check(s["cycles"] == 40, f"40 cycles ran ({s['cycles']})")
    for f in s["failures"]:
        check(False, f)
    ran = {k for k, v in s["per_kind"].items() if v["cycles"]}
    check(len(ran) >= 7, f"most read paths ran in 40 cycles: {sorted(ran)}")
    check(sum(v["resumes"] for v in s["per_kind"].values()) >= 3, "resumes happened")
    check(sum(v["kept"] for v in s["per_kind"].values()) >= 5, "batches were kept")
    check(s["fds_last"] == s["fds_warm"] and s["fds_grew_cycles"] == 0,
          f"descriptors flat: {s['fds_warm']} -> {s['fds_last']}")
    check(s["threads_last"] == s["threads_warm"] and s["threads_grew_cycles"] == 0,
          f"threads flat: {s['threads_warm']} -> {s['threads_last']}")
    check(s["children_max"] == 0, "no child process left after a cycle")
    growth = s["rss_growth"] / (1 << 20)
    check(asan or growth <= 24, f"RSS less kept batches grew {growth:.1f} MiB (at most 24)")
    h5test.finish(f"soak: {s['cycles']} cycles in {s['seconds']} s, descriptors {s['fds_last']}, threads "
                  f"{s['threads_last']}, RSS growth {growth:+.1f} MiB{' (ASan: not checked)' if asan else ''}")


main()
