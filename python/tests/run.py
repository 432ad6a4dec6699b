"""Runs the package's tests against the source tree (or, with --installed,
against the installed package) and prints one summary line. With CI=true a
skipped test fails the run: CI runs as root on Linux, where every test can
run.

Usage: python3 tests/run.py [--installed] [unittest names...]
"""

from __future__ import annotations

import os
import sys
import unittest
import warnings


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    args = sys.argv[1:]
    installed = "--installed" in args
    args = [a for a in args if a != "--installed"]
    if installed:
        os.environ["AGENTSTATE_TESTS_INSTALLED"] = "1"  # subprocesses import it too
    else:
        sys.path.insert(0, os.path.join(os.path.dirname(here), "src"))
    sys.path.insert(0, here)
    sys.dont_write_bytecode = True
    warnings.simplefilter("error", ResourceWarning)
    import agentstate

    if installed and os.path.dirname(here) in agentstate.__file__:
        print("python: --installed, but agentstate comes from the source tree: %s" % agentstate.__file__)
        return 1
    print("testing agentstate %s from %s with Python %s" % (agentstate.__version__, os.path.dirname(agentstate.__file__), sys.version.split()[0]))
    loader = unittest.TestLoader()
    suite = loader.loadTestsFromNames(args) if args else loader.discover(here, pattern="test_*.py", top_level_dir=here)
    result = unittest.TextTestRunner(verbosity=1).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    print("python: %d run, %d failed, %d skipped" % (result.testsRun, failed, len(result.skipped)))
    for test, why in result.skipped:
        print("  skipped %s: %s" % (test.id(), why))
    if failed:
        return 1
    if result.skipped and os.environ.get("CI") == "true":
        print("python: skipped tests fail the run under CI=true")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
