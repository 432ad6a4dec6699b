"""Makes the repository's Python package (python/src) importable by the test
agents in this directory, ahead of any installed copy."""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "python", "src")
sys.path.insert(0, os.path.normpath(SRC))
