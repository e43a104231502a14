"""Host emulation of the Loader's stream following (python/h5pack/loader.py, _follow_stream), for machines
without a GPU; tests/python/test_loader_gpu.py runs the real thing on a GPU (a loop under a side stream).

A CPU loader is given a stand-in "reader stream" and torch.cuda.current_stream is replaced by a stand-in
that returns the stream the test makes current. Checked: under the reader's own stream nothing is
ordered; under another stream, each delivered batch makes that stream wait for the reader's, and each
release makes the reader's stream wait for it (before h5pack_release, so the reader's event comes after
the consumer's kernels); copy=True does both for one batch; a CPU loader never touches torch.cuda."""
import os
import sys
import tempfile

import torch

import h5test
from h5test import check

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import files  # noqa: E402 (tests/python's file writer)
import h5pack
from h5pack import loader as loader_module

h5test.verbose = True


class FakeStream:
    def __init__(self, name, log):
        self.name, self.log, self.device = name, log, 0

    def wait_stream(self, other):
        self.log.append(f"{self.name} waits for {other.name}")

    def __eq__(self, other):
        return isinstance(other, FakeStream) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


def run(path, current_name, copy=False, n=3):
    log = []
    reader_stream, current = FakeStream("reader", log), FakeStream(current_name, log)
    saved = torch.cuda.current_stream
    released = []
    real_release = loader_module.Loader._release

    def traced_release(self, b):
        real_release(self, b)
        released.append(len(log))  # how many orderings were queued before this release returned

    torch.cuda.current_stream = lambda device=None: current if current_name != "reader" else reader_stream
    loader_module.Loader._release = traced_release
    try:
        with h5pack.Loader(path, batch_size=8, order="sequential", threads=1, device="cpu", copy=copy) as ld:
            ld._stream = reader_stream  # as _set_device sets it for a GPU loader
            it = iter(ld)
            for _ in range(n):
                next(it)
            it.close()
    finally:
        torch.cuda.current_stream = saved
        loader_module.Loader._release = real_release
    return log, released


def main():
    with tempfile.TemporaryDirectory() as tmp:
        path = files.write(tmp + "/f.h5")
        log, _ = run(path, "reader")
        check(log == [], f"under the reader's own stream nothing is ordered (got {log})")

        log, released = run(path, "side")
        # keep=1: batch i is given back just before batch i+1 is asked for; the last one stays held
        want = ["side waits for reader", "reader waits for side"] * 2 + ["side waits for reader"]
        check(log == want, f"side stream: each delivery waits for the reader, each release orders the "
                           f"reader after the side stream (got {log})")
        check(released == [2, 4], f"the reader's wait is queued before each h5pack_release (got {released})")

        log, _ = run(path, "side", copy=True, n=2)
        check(log == ["side waits for reader", "reader waits for side"] * 2,
              f"copy=True: the clone waits for the batch, the release for the clone (got {log})")

        calls = []
        saved = torch.cuda.current_stream
        torch.cuda.current_stream = lambda device=None: calls.append(device)
        try:
            with h5pack.Loader(path, batch_size=8, device="cpu") as ld:
                for _ in ld:
                    pass
        finally:
            torch.cuda.current_stream = saved
        check(calls == [], "a CPU loader never asks torch.cuda for a stream")
    h5test.finish("all stream-ordering checks passed")


if __name__ == "__main__":
    main()
