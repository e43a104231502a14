"""The http:// store (reader/store/store_http.c) against a range-capable server started here on 127.0.0.1
(rangeserver.py): every kind of file read through http:// gives the local file's batches byte for byte (as
tests/python/test_stores.py checks mem://), also with latency, 503s, dropped connections and cut bodies
injected; about one request per chunk per epoch; h5pack.info and h5pack-stats info / run / simulate take the
URL; errors name the URL and the cause (404, 403, the object changed during the run, the server gone
mid-epoch, a server that stops answering), each within the retry budget, never a hang.

usage: test_http.py H5PACK_STATS H5PACK"""
import os
import shutil
import subprocess
import sys
import tempfile

import h5test
from h5test import check

try:
    import h5py
    import numpy as np
    import torch  # noqa: F401  (the Loader hands out torch tensors)
    import remotecheck as rc
except ImportError as e:
    h5test.skip(e)

from rangeserver import RangeServer  # noqa: E402

import h5pack  # noqa: E402

STATS, H5PACK = sys.argv[1], sys.argv[2]
WORK = tempfile.mkdtemp(prefix="h5pack-http-")
# small budgets: a failure must show within seconds here
os.environ.update(H5PACK_HTTP_RETRIES="3", H5PACK_HTTP_TIMEOUT="2", H5PACK_HTTP_BACKOFF_MS="20",
                  NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")


def url_of(srv, path):
    return srv.url + os.path.relpath(path, WORK)


def check_every_kind(srv, f):
    for name, path in f.items():
        rc.check_kind(name, path, url_of(srv, path))


def check_faults(srv, f):
    """Latency, 503s, dropped connections, cut and short bodies: retried, the batches unchanged."""
    srv.latency, srv.faults = 0.002, {"503": 5, "drop": 7, "truncate": 11, "short": 13}
    srv.reset_counts()
    for name in ("packed gzip", "tiles"):
        rc.check_kind(name + ", with faults", f[name], url_of(srv, f[name]), **rc.READ_AS.get(name, {}))
    check(srv.count() > 0, "the faulty server was asked")
    srv.latency, srv.faults = 0.0, {}


def chunks_of(path):
    with h5py.File(path, "r") as h:
        d = h["images"]
        return -(-d.shape[0] // d.chunks[0])


def check_requests(srv, f):
    """One request per chunk per epoch, plus a few for the object's size and HDF5's metadata."""
    url = url_of(srv, f["packed"])
    rc.batches(url)  # the first open of the run: libraries loaded, nothing else to learn
    srv.reset_counts()
    rc.batches(url, batch_size=10, order="chunk")
    n, chunks = srv.count(), chunks_of(f["packed"])
    check(n <= chunks + 8, f"requests per epoch {n} (GETs {srv.count(method='GET')}) <= {chunks} chunks + 8 (the "
          f"size, the metadata and the labels)")


def check_info_and_stats(srv, f):
    for name in ("packed", "gzip", "tiles"):
        url = url_of(srv, f[name])
        check(h5pack.info(f[name]) == h5pack.info(url), f"h5pack.info through http:// equals the file's ({name})")
        p = subprocess.run([STATS, "info", url], capture_output=True, text=True)
        check(p.returncode == 0 and url in p.stdout, f"h5pack-stats info {url}: exit {p.returncode} {p.stderr}")
        patch = ["--patch", "48"] if "tiles" in name else []
        p = subprocess.run([STATS, "run", url, "--device", "cpu", "--batch", "7", "--threads", "2", *patch],
                           capture_output=True, text=True)
        check(p.returncode == 0, f"h5pack-stats run {url}: exit {p.returncode} {p.stderr}")
    url = url_of(srv, f["packed"])
    check(np.array_equal(h5pack.read_image(f["packed"], 17), h5pack.read_image(url, 17)),
          "h5pack.read_image through http:// equals the file's")
    p = subprocess.run([STATS, "simulate", url, "--cache", "64K,1M", "--batch", "10"], capture_output=True, text=True)
    check(p.returncode == 0, f"h5pack-stats simulate {url}: exit {p.returncode} {p.stderr}")


def mid_epoch(url, change, after=2):
    """Reads URL (a cache far smaller than the file), calls CHANGE after AFTER batches, reads on."""
    loader = h5pack.Loader(url, batch_size=10, device="cpu", dtype="uint8", order="sequential", epochs=1,
                           threads=2, cache=64 << 10, prefetch=1)
    try:
        for i, _ in enumerate(loader):
            if i + 1 == after:
                change()
    finally:
        loader.close()


def check_s3_addressing(srv, f):
    """s3:// anonymously against this server as an S3-compatible endpoint: path-style requests
    (ENDPOINT/BUCKET/KEY), and a bucket of another region named in the error."""
    os.symlink(WORK, os.path.join(WORK, "bucket"))
    saved = dict(os.environ)
    os.environ.update(AWS_ENDPOINT_URL=srv.url.rstrip("/"), AWS_NO_SIGN_REQUEST="true", AWS_REGION="us-east-1")
    try:
        rc.check_kind("packed, s3:// anonymous, path-style", f["packed"], "s3://bucket/packed.h5")
        rc.expect_error("a bucket in another region", lambda: h5pack.Loader("s3://wrongregion/x.h5", device="cpu"),
                        "s3://wrongregion/x.h5", "eu-west-1", "AWS_REGION=eu-west-1")
    finally:
        os.environ.clear()
        os.environ.update(saved)


def check_errors(f):
    srv = RangeServer(WORK)
    rc.expect_error("404", lambda: h5pack.Loader(srv.url + "nope.h5", device="cpu"), "not found", "404",
                    srv.url + "nope.h5")
    rc.expect_error("403", lambda: h5pack.Loader(srv.url + "forbidden/x.h5", device="cpu"), "access denied", "403",
                    srv.url + "forbidden/x.h5")
    url = url_of(srv, f["packed"])
    rc.expect_error("an object changed during the run", lambda: mid_epoch(url, lambda: srv.etags.update(
        {"/packed.h5": '"another"'})), "changed", "ETag", url)
    # a server that stops answering: each try times out after 1 s of silence, 4 tries per read
    os.environ["H5PACK_HTTP_TIMEOUT"] = "1"
    rc.expect_error("a server that stops answering", lambda: mid_epoch(url, lambda: setattr(srv, "hang", True)),
                    url, "GET", "timed out", within=30)
    os.environ["H5PACK_HTTP_TIMEOUT"] = "2"
    srv.stop()
    srv = RangeServer(WORK)
    url = url_of(srv, f["packed"])
    rc.expect_error("the server gone mid-epoch", lambda: mid_epoch(url, srv.stop), url, "GET", within=20)
    rc.expect_error("a server that is not there", lambda: h5pack.Loader(url, device="cpu"), url, "HEAD", within=20)


def main():
    f = rc.make_files(WORK, H5PACK)
    srv = RangeServer(WORK)
    check_every_kind(srv, f)
    check_faults(srv, f)
    check_requests(srv, f)
    check_info_and_stats(srv, f)
    check_s3_addressing(srv, f)
    srv.stop()
    check_errors(f)
    shutil.rmtree(WORK)
    h5test.finish("http: every kind of file through http:// equals the file, with faults too; errors name the "
                  "URL and the cause in time")


main()
