"""A minimal runner for the Python package's tests (the test root has no pytest): runs the given
test functions in order, prints one line each, exits 1 when any failed."""
import os
import sys
import time
import traceback


def run(tests):
    """TESTS=name,name in the environment runs only those."""
    only = os.environ.get("TESTS")
    if only:
        tests = [fn for fn in tests if fn.__name__ in only.split(",")]
    failed = []
    for fn in tests:
        start = time.time()
        try:
            fn()
        except Exception:  # noqa: BLE001 -- every failure is reported, the others still run
            traceback.print_exc()
            failed.append(fn.__name__)
            print(f"FAILED {fn.__name__}", flush=True)
            continue
        print(f"ok     {fn.__name__} ({time.time() - start:.1f} s)", flush=True)
    print(f"{len(tests) - len(failed)} passed, {len(failed)} failed"
          + (f": {', '.join(failed)}" if failed else ""), flush=True)
    sys.exit(1 if failed else 0)


def raises(exc_type, words, fn, *args, **kwargs):
    """Asserts that fn(*args) raises exc_type with every one of `words` in its message."""
    try:
        fn(*args, **kwargs)
    except exc_type as e:
        missing = [w for w in words if w not in str(e)]
        assert not missing, f"{exc_type.__name__} without {missing}: {e}"
        return e
    raise AssertionError(f"no {exc_type.__name__} from {getattr(fn, '__name__', fn)}{args}")
