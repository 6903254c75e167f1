"""Helpers shared by the Python client programs."""
import os
import sys
import time

# The replication factor of the topics a scenario creates: 3 when the cluster rows run a scenario
# (compat/cluster/cluster-test.js), else 1.
REPLICATION_FACTOR = int(os.environ.get("FJORD_COMPAT_REPLICATION_FACTOR", "1"))


def check(ok, message):
    if not ok:
        raise AssertionError(message)


def retry(f, seconds=10):
    """Runs f until it succeeds or `seconds` pass (metadata propagation)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return f()
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def main(scenarios, run):
    """Parses BOOTSTRAP SCENARIO, calls run(bootstrap, scenario_fn); exits 0 / 1 (failure) / 2 (usage)."""
    if len(sys.argv) != 3:
        print(f"usage: {sys.argv[0]} BOOTSTRAP SCENARIO", file=sys.stderr)
        sys.exit(2)
    bootstrap, name = sys.argv[1:]
    if name not in scenarios:
        print(f"unknown scenario {name}", file=sys.stderr)
        sys.exit(2)
    try:
        summary = run(bootstrap, scenarios[name])
        if isinstance(summary, str):
            print(summary)  # what a passing scenario saw (run.js --verbose shows it)
    except Exception as e:  # noqa: BLE001 - any client error is a failure
        print(f"FAIL: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)


def run_mode(f, *args):
    """Runs a mode other than a scenario (e.g. cluster-produce): exits 0, or 1 after a FAIL line."""
    try:
        f(*args)
    except Exception as e:  # noqa: BLE001 - any client error is a failure
        print(f"FAIL: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)
    sys.exit(0)
