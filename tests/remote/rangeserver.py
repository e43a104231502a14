"""A small HTTP/1.1 file server for the remote-store tests, on 127.0.0.1 only: HEAD and GET with one byte
range (206 + Content-Range), an ETag per file, keep-alive, a count of the requests, and faults to inject
while it runs:

    srv = RangeServer(root)            # serves the files under ROOT at srv.url + "name.h5"
    srv.latency = 0.02                 # seconds added to every request
    srv.faults = {"503": 3}            # every 3rd request answers 503; also "drop" (the connection closed
                                       # without an answer), "truncate" (half the body, then closed), "short"
                                       # (an honest but short body)
    srv.etags["/x.h5"] = '"new"'       # the object "changed": its ETag differs from now on
    srv.hang = True                    # requests get no answer (until stop)
    (paths under /forbidden/ answer 403; under /wrongregion/ 301 with S3's x-amz-bucket-region: eu-west-1)
    srv.stop()                         # gone: listening socket and open connections closed

As a program it serves ROOT for a command, with H5PACK_TEST_URL=http://127.0.0.1:PORT/ in its environment,
and exits with its status:  python3 rangeserver.py ROOT [--latency=MS] [--fault=KIND=EVERY ...] -- CMD ARGS..."""
import email.utils
import http.server
import os
import socket
import subprocess
import sys
import threading
import time


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the client's connection reuse is part of what is tested

    def log_message(self, *args):
        pass

    def setup(self):
        super().setup()
        self.server.owner._track(self.connection, True)

    def finish(self):
        self.server.owner._track(self.connection, False)
        super().finish()

    def do_HEAD(self):
        self._serve(head=True)

    def do_GET(self):
        self._serve(head=False)

    def _drop(self):
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _plain(self, status, text):
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _serve(self, head):
        owner = self.server.owner
        fault = owner._admit(self.path, self.command, self.headers.get("Range"))
        if owner.latency:
            time.sleep(owner.latency)
        while owner.hang and not owner.stopped:
            time.sleep(0.05)
        if fault == "drop" or owner.stopped:
            return self._drop()
        if fault == "503":
            return self._plain(503, "busy")
        if self.path.startswith("/forbidden/"):
            return self._plain(403, "forbidden")
        if self.path.startswith("/wrongregion/"):  # as S3 answers for a bucket of another region
            self.send_response(301)
            self.send_header("x-amz-bucket-region", "eu-west-1")
            self.send_header("Content-Length", "0")
            return self.end_headers()
        path = os.path.join(owner.root, self.path.lstrip("/").split("?")[0])
        if not os.path.isfile(path):
            return self._plain(404, "not found")
        size = os.path.getsize(path)
        first, last, status = 0, size - 1, 200
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            a, b = rng[6:].split("-")
            first, last = int(a), min(int(b), size - 1)
            if first >= size:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                return self.end_headers()
            status = 206
        cut = fault in ("truncate", "short")
        sent = b""
        if cut and not head:
            with open(path, "rb") as f:
                f.seek(first)
                body = f.read(last + 1 - first)
            sent = body[:len(body) // 2]
        self.send_response(status)
        length = last + 1 - first if fault != "short" else len(sent)
        self.send_header("Content-Length", str(length))
        if status == 206:
            self.send_header("Content-Range", f"bytes {first}-{last}/{size}")
        self.send_header("ETag", owner.etags.get(self.path, owner._etag(path)))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Last-Modified", email.utils.formatdate(os.path.getmtime(path), usegmt=True))
        self.end_headers()
        if head:
            return
        if not cut:  # the whole body by sendfile: the server's CPU is not what a bench of the reader measures
            self.wfile.flush()
            with open(path, "rb") as f:
                self.connection.sendfile(f, first, last + 1 - first)
            return
        self.wfile.write(sent)
        if fault == "truncate":
            self.wfile.flush()
            self._drop()


class _Server(http.server.ThreadingHTTPServer):
    # a listen queue for a reader's many connections at once: socketserver's 5 drops the others' SYNs,
    # and their connect waits a second for the retransmit
    request_queue_size = 256


class RangeServer:
    def __init__(self, root, latency=0.0):
        self.root, self.latency = root, latency
        self.faults, self.etags, self.hang, self.stopped = {}, {}, False, False
        self.requests = []  # (method, path, range) of every request, in arrival order
        self._lock, self._open, self._faulted = threading.Lock(), set(), set()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.owner = self
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def _etag(self, path):
        st = os.stat(path)
        return f'"{st.st_size:x}-{st.st_mtime_ns:x}"'

    def _track(self, conn, opened):
        with self._lock:
            (self._open.add if opened else self._open.discard)(conn)

    def _admit(self, path, method, rng):
        """Counts the request; the fault it gets, if any. A request that just had a fault gets none on its
        next try, so that each read succeeds within a small retry budget whatever the interleaving."""
        key = (method, path, rng)
        with self._lock:
            self.requests.append(key)
            n = len(self.requests)
            if key in self._faulted:
                self._faulted.discard(key)
                return None
            for kind, every in self.faults.items():
                body_fault = kind in ("truncate", "short")  # a HEAD has no body to cut
                if every and n % every == 0 and not (body_fault and method == "HEAD"):
                    self._faulted.add(key)
                    return kind
        return None

    def count(self, path=None, method=None):
        with self._lock:
            return sum(1 for m, p, _ in self.requests
                       if (path is None or p == path) and (method is None or m == method))

    def reset_counts(self):
        with self._lock:
            self.requests.clear()

    def stop(self):
        """The server is gone: nothing listens, open connections are cut."""
        self.stopped = True
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            conns = list(self._open)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _main(argv):
    split = argv.index("--")
    root, opts = argv[1], argv[2:split]
    srv = RangeServer(root)
    for opt in opts:  # --latency MS, --fault KIND=EVERY
        if opt.startswith("--latency="):
            srv.latency = float(opt.split("=")[1]) / 1000.0
        elif opt.startswith("--fault="):
            kind, every = opt.split("=")[1:]
            srv.faults[kind] = int(every)
    env = dict(os.environ, H5PACK_TEST_URL=srv.url, NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
    rc = subprocess.call(argv[split + 1:], env=env)
    srv.stop()
    print(f"rangeserver: {srv.count()} requests", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
