"""The package's build backend (PEP 517), in the tree and standard library
only, so that ``pip install ./python`` needs nothing but pip: no network, no
setuptools, no wheel, on any CPython 3.9 or later.

It builds the pure-Python wheel of src/agentstate and an sdist, with the
metadata of pyproject.toml's [project] table (read by a small reader of the
TOML that file uses: tests/test_build.py checks it against tomllib) and the
version of agentstate.__version__. Files are written in sorted order with a
fixed timestamp (SOURCE_DATE_EPOCH, if set), so that a build is reproducible.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from typing import Any, Dict, List, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "agentstate"
SDIST_FILES = ("pyproject.toml", "README.md", "LICENSE")  # plus src/, tests/ and _backend/


def _read_toml(text: str) -> Dict[str, Any]:
    """Reads the subset of TOML that pyproject.toml uses: [tables], and
    key = value with strings, integers, booleans, arrays (over several
    lines too) and inline tables of those. Anything else raises ValueError."""
    doc: Dict[str, Any] = {}
    table = doc
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = _strip_comment(lines[i]).strip()
        i += 1
        if not line:
            continue
        m = re.fullmatch(r"\[([A-Za-z0-9_.-]+)\]", line)
        if m:
            table = doc
            for part in m.group(1).split("."):
                table = table.setdefault(part, {})
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ValueError("pyproject.toml: cannot read line %d: %r" % (i, lines[i - 1]))
        value = value.strip()
        while value.count("[") + value.count("{") > value.count("]") + value.count("}") and i < len(lines):
            value += " " + _strip_comment(lines[i]).strip()
            i += 1
        parsed, rest = _value(value)
        if rest.strip():
            raise ValueError("pyproject.toml: trailing text at line %d: %r" % (i, rest))
        table[key.strip().strip('"')] = parsed
    return doc


def _strip_comment(line: str) -> str:
    in_string = False
    for j, c in enumerate(line):
        if c == '"' and (j == 0 or line[j - 1] != "\\"):
            in_string = not in_string
        elif c == "#" and not in_string:
            return line[:j]
    return line


def _value(s: str) -> Tuple[Any, str]:
    s = s.lstrip()
    if s.startswith('"'):
        m = re.match(r'"((?:[^"\\]|\\.)*)"', s)
        if not m:
            raise ValueError("pyproject.toml: unterminated string: %r" % s)
        return _unescape(m.group(1)), s[m.end():]
    if s.startswith("["):
        items: List[Any] = []
        s = s[1:].lstrip()
        while not s.startswith("]"):
            item, s = _value(s)
            items.append(item)
            s = s.lstrip()
            if s.startswith(","):
                s = s[1:].lstrip()
        return items, s[1:]
    if s.startswith("{"):
        table: Dict[str, Any] = {}
        s = s[1:].lstrip()
        while not s.startswith("}"):
            key, _, s = s.partition("=")
            table[key.strip().strip('"')], s = _value(s)
            s = s.lstrip()
            if s.startswith(","):
                s = s[1:].lstrip()
        return table, s[1:]
    m = re.match(r"(true|false|-?[0-9]+)", s)
    if not m:
        raise ValueError("pyproject.toml: cannot read value %r" % s)
    word = m.group(1)
    return (word == "true" if word in ("true", "false") else int(word)), s[m.end():]


_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


def _unescape(s: str) -> str:
    def one(m: "re.Match[str]") -> str:
        e = m.group(1)
        if e[0] in "uU":
            return chr(int(e[1:], 16))
        return _ESCAPES[e]

    return re.sub(r'\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|["\\ntrbf])', one, s)


def project() -> Dict[str, Any]:
    """The [project] table, with the version filled in."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        meta = dict(_read_toml(f.read())["project"])
    with open(os.path.join(ROOT, "src", PACKAGE, "__init__.py"), encoding="utf-8") as f:
        m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    if not m:
        raise ValueError("src/%s/__init__.py sets no __version__" % PACKAGE)
    meta["version"] = m.group(1)
    return meta


def metadata(meta: Dict[str, Any]) -> str:
    """Core metadata 2.1 (PKG-INFO, METADATA) of the [project] table."""
    lines = ["Metadata-Version: 2.1", "Name: " + meta["name"], "Version: " + meta["version"], "Summary: " + meta["description"]]
    for a in meta.get("authors", []):
        lines.append("Author: " + a["name"])
    if "license" in meta:
        lines.append("License: " + meta["license"]["text"])
    if meta.get("keywords"):
        lines.append("Keywords: " + ",".join(meta["keywords"]))
    lines += ["Classifier: " + c for c in meta.get("classifiers", [])]
    lines.append("Requires-Python: " + meta["requires-python"])
    lines += ["Requires-Dist: " + d for d in meta.get("dependencies", [])]
    lines += ["Project-URL: %s, %s" % kv for kv in meta.get("urls", {}).items()]
    lines.append("Description-Content-Type: text/markdown")
    with open(os.path.join(ROOT, meta["readme"]), encoding="utf-8") as f:
        readme = f.read()
    return "\n".join(lines) + "\n\n" + readme


def _dist_name(meta: Dict[str, Any]) -> str:
    return re.sub(r"[-_.]+", "_", str(meta["name"])).lower() + "-" + str(meta["version"])


def _package_files() -> List[Tuple[str, str]]:
    """(path in the wheel, path on disk) of the package: its modules and py.typed."""
    src = os.path.join(ROOT, "src")
    out = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(src, PACKAGE)):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py") or name == "py.typed":
                path = os.path.join(dirpath, name)
                out.append((os.path.relpath(path, src).replace(os.sep, "/"), path))
    return out


def _timestamp() -> Tuple[int, int, int, int, int, int]:
    t = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01, the earliest a zip holds
    return time.gmtime(max(t, 315532800))[:6]


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None, metadata_directory: Optional[str] = None) -> str:
    meta = project()
    dist = _dist_name(meta)
    info = dist + ".dist-info/"
    files: List[Tuple[str, bytes]] = []
    for name, path in _package_files():
        with open(path, "rb") as f:
            files.append((name, f.read()))
    with open(os.path.join(ROOT, "LICENSE"), "rb") as f:
        files.append((info + "LICENSE", f.read()))
    files.append((info + "METADATA", metadata(meta).encode("utf-8")))
    files.append((info + "WHEEL", b"Wheel-Version: 1.0\nGenerator: agentstate_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"))
    files.append((info + "top_level.txt", (PACKAGE + "\n").encode()))
    record = "".join(_record_line(n, d) + "\n" for n, d in files) + info + "RECORD,,\n"
    files.append((info + "RECORD", record.encode()))
    name = dist + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in files:
            zi = zipfile.ZipInfo(n, _timestamp())
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, d)
    return name


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    meta = project()
    dist = _dist_name(meta)
    paths = list(SDIST_FILES)
    for top in ("src", "tests", "_backend"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, top)):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            paths += sorted(os.path.relpath(os.path.join(dirpath, n), ROOT) for n in filenames if not n.endswith(".pyc"))
    mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
    name = dist + ".tar.gz"

    def add(tar: tarfile.TarFile, arcname: str, data: bytes) -> None:
        ti = tarfile.TarInfo(dist + "/" + arcname)
        ti.size, ti.mtime, ti.mode = len(data), mtime, 0o644
        tar.addfile(ti, io.BytesIO(data))

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for p in paths:
            with open(os.path.join(ROOT, p), "rb") as f:
                add(tar, p.replace(os.sep, "/"), f.read())
        add(tar, "PKG-INFO", metadata(meta).encode("utf-8"))
    with open(os.path.join(sdist_directory, name), "wb") as out, gzip.GzipFile(fileobj=out, mode="wb", mtime=mtime) as gz:
        gz.write(buf.getvalue())
    return name


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []
