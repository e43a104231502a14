"""The s3:// store (reader/store/store_s3.c) against moto's S3 server started here on 127.0.0.1 from the venv
of cmake/install-s3-test.sh: a bucket filled with every kind of file reads back through s3://BUCKET/KEY
equal to the local file, byte for byte, with credentials from the environment, from a profile of a
credentials file and with a session token (an assumed role), and keys that need URI encoding; signatures
checked by the server (moto's IAM checks on); errors name the location, the cause and the credentials' source: a wrong secret (403
SignatureDoesNotMatch), anonymous access to a private bucket, a missing key.

Skipped (exit 77) when the venv is missing ("skipped: moto not installed"), unless H5PACK_REQUIRE_S3_TEST=1
(tests/run.sh), which makes that a failure.

usage: test_s3.py VENV_PYTHON H5PACK"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

import h5test
from h5test import check

try:
    import torch  # noqa: F401  (the Loader hands out torch tensors)
    import remotecheck as rc
except ImportError as e:
    h5test.skip(e)

VENV_PYTHON, H5PACK = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
BUCKET = "train"
# Keys that need URI encoding. Moto checks signatures over its decoded path, which differs from what S3
# (and botocore itself) sign for sub-delimiters and non-ASCII bytes, so the odd key is read before moto
# checks signatures (its addressing), the spaced one after (its signature too).
ODD_KEY = "sub dir/a+b,c(1)=\u00e9.h5"
SPACED_KEY = "sub dir/x y.h5"
CRED_VARS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
             "AWS_SHARED_CREDENTIALS_FILE", "AWS_NO_SIGN_REQUEST")


def need_moto():
    ok = os.path.exists(VENV_PYTHON) and subprocess.run([VENV_PYTHON, "-c", "import moto.server, boto3"],
                                                        capture_output=True).returncode == 0
    if ok:
        return
    if os.environ.get("H5PACK_REQUIRE_S3_TEST") == "1":
        check(False, f"moto is required here (H5PACK_REQUIRE_S3_TEST=1) but {VENV_PYTHON} lacks it: run "
              "bash cmake/install-s3-test.sh", fatal=True)
    h5test.skip(f"moto not installed ({VENV_PYTHON}: bash cmake/install-s3-test.sh makes it)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_moto():
    port = free_port()
    proc = subprocess.Popen([VENV_PYTHON, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(endpoint + "/moto-api/", timeout=1).read()
            return proc, endpoint
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    proc.kill()
    check(False, f"moto's server did not start: {proc.stderr.read().decode(errors='replace')[-2000:]}", fatal=True)


def fill(endpoint, f):
    uploads = [*f.values(), f"{ODD_KEY}={f['packed']}", f"{SPACED_KEY}={f['packed']}"]
    p = subprocess.run([VENV_PYTHON, os.path.join(HERE, "s3_setup.py"), endpoint, BUCKET, *uploads],
                       capture_output=True, text=True, env=dict(os.environ, NO_PROXY="127.0.0.1"))
    check(p.returncode == 0, f"s3_setup.py: {p.stderr[-3000:]}", fatal=True)
    return json.loads(p.stdout)


def check_signatures_from_now(endpoint):
    """Moto checks every request's signature and the key's policy from now on."""
    req = urllib.request.Request(endpoint + "/moto-api/reset-auth", data=b"0", method="POST",
                                 headers={"Content-Type": "text/plain"})
    urllib.request.urlopen(req, timeout=10).read()


def use(**env):
    """Only these credential variables set."""
    for v in CRED_VARS:
        os.environ.pop(v, None)
    os.environ.update(env)


def check_every_kind(f, creds):
    use(AWS_ACCESS_KEY_ID=creds["key_id"], AWS_SECRET_ACCESS_KEY=creds["secret"])
    for name, path in f.items():
        rc.check_kind(name, path, f"s3://{BUCKET}/{os.path.basename(path)}")
    rc.check_kind(f"packed, key '{SPACED_KEY}'", f["packed"], f"s3://{BUCKET}/{SPACED_KEY}")


def check_credential_sources(work, f, creds):
    path, loc = f["packed gzip"], f"s3://{BUCKET}/{os.path.basename(f['packed gzip'])}"
    profile = os.path.join(work, "credentials")
    with open(profile, "w") as out:
        out.write(f"[default]\naws_access_key_id = nobody\naws_secret_access_key = wrong\n\n[h5pack]\n"
                  f"aws_access_key_id = {creds['key_id']}\naws_secret_access_key = {creds['secret']}\n")
    use(AWS_SHARED_CREDENTIALS_FILE=profile, AWS_PROFILE="h5pack")
    rc.check_kind("packed gzip, a profile's key", path, loc)
    s = creds["session"]
    use(AWS_ACCESS_KEY_ID=s["key_id"], AWS_SECRET_ACCESS_KEY=s["secret"], AWS_SESSION_TOKEN=s["token"])
    rc.check_kind("packed gzip, an assumed role's session token", path, loc)


def check_errors(f, creds):
    import h5pack
    loc = f"s3://{BUCKET}/{os.path.basename(f['packed'])}"
    use(AWS_ACCESS_KEY_ID=creds["key_id"], AWS_SECRET_ACCESS_KEY="not-the-secret")
    rc.expect_error("a wrong secret", lambda: h5pack.Loader(loc, device="cpu"), loc, "access denied", "403",
                    "SignatureDoesNotMatch", f"AWS_ACCESS_KEY_ID={creds['key_id']}")
    use(AWS_NO_SIGN_REQUEST="true")
    rc.expect_error("anonymous access to a private bucket", lambda: h5pack.Loader(loc, device="cpu"), loc,
                    "access denied", "anonymous")
    use(AWS_ACCESS_KEY_ID=creds["key_id"], AWS_SECRET_ACCESS_KEY=creds["secret"])
    missing = f"s3://{BUCKET}/nope.h5"
    rc.expect_error("a missing key", lambda: h5pack.Loader(missing, device="cpu"), missing, "not found",
                    "NoSuchKey")
    rc.expect_error("a location without a key", lambda: h5pack.Loader(f"s3://{BUCKET}", device="cpu"),
                    "s3://BUCKET/KEY")


def main():
    need_moto()
    work = tempfile.mkdtemp(prefix="h5pack-s3-")
    f = rc.make_files(work, H5PACK)
    proc, endpoint = start_moto()
    try:
        creds = fill(endpoint, f)
        os.environ.update(AWS_ENDPOINT_URL=endpoint, AWS_REGION="us-east-1", NO_PROXY="127.0.0.1",
                          no_proxy="127.0.0.1", H5PACK_HTTP_RETRIES="2", H5PACK_HTTP_BACKOFF_MS="20")
        use(AWS_ACCESS_KEY_ID=creds["key_id"], AWS_SECRET_ACCESS_KEY=creds["secret"])
        rc.check_kind(f"packed, key '{ODD_KEY}'", f["packed"], f"s3://{BUCKET}/{ODD_KEY}")
        check_signatures_from_now(endpoint)
        check_every_kind(f, creds)
        check_credential_sources(work, f, creds)
        check_errors(f, creds)
    finally:
        proc.kill()
        proc.wait()
    shutil.rmtree(work)
    h5test.finish("s3: every kind of file through s3:// from moto equals the file (environment, profile and "
                  "session-token credentials); errors name the cause and the credentials")


main()
