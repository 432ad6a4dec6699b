"""What the test agents in this directory share: the repository's Python
package (python/src) importable ahead of any installed copy, and the
controls' unlocked read-modify-write."""

import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "python", "src")
sys.path.insert(0, os.path.normpath(SRC))

import agentstate  # noqa: E402
from agentstate import _files, _json  # noqa: E402


def unlocked_mutate(path, fn):
    """The pattern the lock replaces, for the controls: read, change and
    replace the document durably, with no lock at all."""
    data = _files.read_regular(path, agentstate.DEFAULT_MAX_SIZE)
    parsed = None if data is None else _json.decode(data, path)
    doc = {} if parsed is None else parsed.values
    fn(doc)
    out = _json.encode(parsed, doc, False)
    if out is not None:
        _files.replace(os.path.abspath(path), out, 0o644, "mutate", path)
    return doc
