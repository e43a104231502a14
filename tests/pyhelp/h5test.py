"""The one helper module of the Python tests: checks, failure counting and the exit status.

h5pack_python_test (cmake/tests.cmake) puts tests/pyhelp/ on PYTHONPATH, so every test script can write

    import h5test
    from h5test import check

    check(cond, "what was expected")               # prints "FAIL: ..." and counts it; the test goes on
    check(cond, "what was expected", fatal=True)   # ... or stops at once (exit 1): later steps need it
    h5test.verbose = True                           # also print "ok: ..." for every passed check
    h5test.finish("all foo checks passed")          # at the end: exit 1 if a check failed, else print this
    h5test.skip(f"needs h5py ({e})")                # print "skipped: ...", exit 77 (ctest: skipped)

A script that counted a failed check cannot end with status 0 (nor 77): without finish() (an early
sys.exit(0), a forgotten call), the exit handler below ends it with status 1. Exceptions keep failing the
test as usual (Python exits 1)."""
import atexit
import os
import sys

verbose = False
_failures = []


def check(cond, what, fatal=False):
    """Records a failed check (printed as "FAIL: what"); fatal=True exits 1 at once. Returns bool(cond)."""
    if cond:
        if verbose:
            print(f"ok: {what}")
        return True
    _failures.append(what)
    print(f"FAIL: {what}", flush=True)
    if fatal:
        sys.exit(1)
    return False


def failures():
    """The number of failed checks so far."""
    return len(_failures)


def finish(passed_message):
    """Ends the test: exit 1 after a count of the failed checks, else prints PASSED_MESSAGE (exit 0)."""
    if _failures:
        print(f"{len(_failures)} check(s) failed")
        sys.exit(1)
    print(passed_message)


def skip(why):
    """Ends the test as skipped (exit 77, ctest's SKIP_RETURN_CODE) after printing why."""
    print(f"skipped: {why}")
    sys.exit(77)


def _never_pass_after_a_failure():
    if _failures:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)  # the only way an exit handler sets the status; handlers registered before it are skipped


atexit.register(_never_pass_after_a_failure)
