"""The package's own build backend (_backend/agentstate_backend.py) builds a
wheel that holds the package and valid metadata, and an sdist that builds
the same wheel. The install itself (pip, a fresh venv without setuptools or
wheel, offline) is the Makefile's python target."""

from __future__ import annotations

import base64
import csv
import email.parser
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile
from typing import Any, Dict

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(PYTHON_DIR, "_backend"))
import agentstate_backend as backend  # noqa: E402

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None  # type: ignore[assignment]


class BuildTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.dir = self.tmp.name

    def wheel(self) -> zipfile.ZipFile:
        name = backend.build_wheel(self.dir)
        self.assertEqual("agentstate_core-%s-py3-none-any.whl" % backend.project()["version"], name)
        z = zipfile.ZipFile(os.path.join(self.dir, name))
        self.addCleanup(z.close)
        return z

    def test_wheel_holds_the_package(self) -> None:
        z = self.wheel()
        src = os.path.join(PYTHON_DIR, "src", "agentstate")
        want = sorted("agentstate/" + n for n in os.listdir(src) if n.endswith(".py") or n == "py.typed")
        self.assertEqual(want, sorted(n for n in z.namelist() if n.startswith("agentstate/")))
        for n in want:
            with open(os.path.join(src, n.split("/", 1)[1]), "rb") as f:
                self.assertEqual(f.read(), z.read(n), n)

    def test_record_lists_every_file_with_its_hash(self) -> None:
        z = self.wheel()
        info = [n for n in z.namelist() if n.endswith(".dist-info/RECORD")][0]
        rows = list(csv.reader(io.StringIO(z.read(info).decode())))
        self.assertEqual(sorted(z.namelist()), sorted(r[0] for r in rows))
        for path, digest, size in rows:
            if path == info:
                self.assertEqual(("", ""), (digest, size))
                continue
            data = z.read(path)
            want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            self.assertEqual((want, str(len(data))), (digest, size), path)

    def test_metadata_is_pyprojects(self) -> None:
        z = self.wheel()
        meta = email.parser.Parser().parsestr(z.read(next(n for n in z.namelist() if n.endswith("/METADATA"))).decode())
        project = backend.project()
        self.assertEqual("agentstate-core", meta["Name"])
        self.assertEqual(project["version"], meta["Version"])
        self.assertEqual(">=3.9", meta["Requires-Python"])
        self.assertEqual(project["classifiers"], meta.get_all("Classifier"))
        self.assertEqual("text/markdown", meta["Description-Content-Type"])
        with open(os.path.join(PYTHON_DIR, "README.md"), encoding="utf-8") as f:
            self.assertEqual(f.read(), meta.get_payload())
        wheel = email.parser.Parser().parsestr(z.read(next(n for n in z.namelist() if n.endswith("/WHEEL"))).decode())
        self.assertEqual(("true", "py3-none-any"), (wheel["Root-Is-Purelib"], wheel["Tag"]))

    def test_pyproject_reader_agrees_with_tomllib(self) -> None:
        if tomllib is None:
            self.skipTest("tomllib is new in Python 3.11")
        with open(os.path.join(PYTHON_DIR, "pyproject.toml"), encoding="utf-8") as f:
            text = f.read()
        self.assertEqual(tomllib.loads(text), backend._read_toml(text))
        # Strings with escapes, numbers, inline tables, comments, nesting.
        sample = '[a.b]\nk = "x \\"y\\" \\u00e9 # not a comment"  # a comment\nn = -3\nt = true\nl = [\n  {name = "a"},  # one\n  {name = "b"},\n]\n'
        self.assertEqual(tomllib.loads(sample), backend._read_toml(sample))

    def test_pyproject_reader_refuses_what_it_cannot_read(self) -> None:
        for text in ['k = 1.5\n', "k = 'literal'\n", "[[array.of.tables]]\n", 'k = """multi"""\n']:
            with self.assertRaises(ValueError, msg=text):
                backend._read_toml(text)

    def test_builds_are_reproducible(self) -> None:
        first: Dict[str, Any] = {}
        for build in (backend.build_wheel, backend.build_sdist):
            name = build(self.dir)
            with open(os.path.join(self.dir, name), "rb") as f:
                first[name] = f.read()
            os.remove(os.path.join(self.dir, name))
            self.assertEqual(name, build(self.dir))
            with open(os.path.join(self.dir, name), "rb") as f:
                self.assertEqual(first[name], f.read(), name)

    def test_sdist_builds_the_same_wheel(self) -> None:
        name = backend.build_sdist(self.dir)
        with tarfile.open(os.path.join(self.dir, name)) as tar:
            names = tar.getnames()
            top = name[: -len(".tar.gz")]
            for want in ("pyproject.toml", "README.md", "LICENSE", "PKG-INFO", "src/agentstate/__init__.py", "_backend/agentstate_backend.py", "tests/run.py"):
                self.assertIn(top + "/" + want, names)
            if sys.version_info >= (3, 12):
                tar.extractall(self.dir, filter="data")
            else:
                tar.extractall(self.dir)
        z = self.wheel()
        record = z.read(next(n for n in z.namelist() if n.endswith("/RECORD")))
        out = os.path.join(self.dir, "out")
        os.mkdir(out)
        code = "import sys; sys.path.insert(0, '_backend'); import agentstate_backend as b; print(b.build_wheel(%r))" % out
        subprocess.run([sys.executable, "-c", code], cwd=os.path.join(self.dir, top), check=True, stdout=subprocess.DEVNULL)
        with zipfile.ZipFile(os.path.join(out, os.listdir(out)[0])) as z:
            self.assertEqual(record, z.read(next(n for n in z.namelist() if n.endswith("/RECORD"))))


if __name__ == "__main__":
    unittest.main()
