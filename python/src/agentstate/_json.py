"""Documents as JSON objects: strict decoding with byte offsets, the rules
of status documents, and the layout the Go package writes.

A document is decoded into its top-level members, each kept three ways: the
value handed to the caller, the exact text of the value as read (written
back verbatim while the member is unchanged), and a second decode to tell
whether the caller changed it. Members the caller changed or added are
encoded as Go's encoding/json encodes them (see encode_value).
"""

from __future__ import annotations

import datetime
import decimal
import json
import json.decoder
import math
import re
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from .errors import CorruptError, InvalidArgument

# The members the Go package's Status type declares, in its order, with
# their Go types: a status document puts them first and holds each as a Go
# reader of Status can decode it, as Go's status.StatusDocument does.
STATUS_TYPES = (
    ("status", "string"), ("agent", "string"), ("repo", "string"), ("org", "string"), ("task", "string"),
    ("branch", "string"), ("issue", "int"), ("pid", "int"), ("process_id", "string"),
    ("started_at", "time"), ("updated_at", "time"), ("question", "string"), ("runs", "int"),
    ("pr_url", "string"), ("note", "string"), ("runtime", "string"),
)
STATUS_MEMBERS = tuple(name for name, _ in STATUS_TYPES)
_STATUS_INDEX = {name: i for i, name in enumerate(STATUS_MEMBERS)}
_STATUS_TYPE = dict(STATUS_TYPES)

# The kinds of document, as corestate names them: "status" (the rules
# above, and updated_at stamped on each change) and "json" (any JSON object:
# no member is special, members sorted by name).
STATUS, JSON = "status", "json"
STATUS_FILE = "status.json"


def kind_of(path: str, kind: Optional[str]) -> str:
    """The kind of the document at path: kind if given, else status for a
    file named status.json and json for any other, as corestate decides."""
    if kind is None:
        return STATUS if path.replace("\\", "/").rsplit("/", 1)[-1] == STATUS_FILE else JSON
    if kind not in (STATUS, JSON):
        raise InvalidArgument("agentstate: kind %r: want %r or %r" % (kind, STATUS, JSON))
    return kind


def fold(name: str) -> str:
    """name as Go's encoding/json compares names case-insensitively (with
    the two non-ASCII letters that fold to ASCII ones)."""
    return name.replace("\u017f", "s").replace("\u212a", "k").lower()


_STATUS_FOLDED = {fold(name): name for name in STATUS_MEMBERS}
_INTEGER = re.compile(r"-?(0|[1-9][0-9]*)")
# What Go's time.Time.UnmarshalJSON accepts: time.Parse(time.RFC3339, ...)
# on the string's bytes as they are (escapes are not decoded), which takes a
# one-digit hour, a fraction after "." or ",", and offsets up to 24:60.
_RFC3339 = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{1,2}):([0-9]{2}):([0-9]{2})([.,][0-9]+)?(Z|[+-]([0-9]{2}):([0-9]{2}))")
_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def go_time_ok(s: str) -> bool:
    """Whether Go's time.Time reads the JSON string whose text between the
    quotes is s (see _RFC3339)."""
    m = _RFC3339.fullmatch(s)
    if m is None:
        return False
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not 1 <= month <= 12 or not 1 <= day <= _DAYS[month - 1] + (month == 2 and leap):
        return False
    if hour > 23 or minute > 59 or second > 59:
        return False
    return m.group(9) is None or int(m.group(9)) <= 24 and int(m.group(10)) <= 60


def status_problem(name: str, text: str, value: Any) -> Optional[str]:
    """Why a status document may not hold member name with the JSON text
    text (the decoded value): a name Go would read as a Status field's but
    other languages would not, or a Status field a Go reader cannot decode;
    None if it may."""
    want = _STATUS_TYPE.get(name)
    if want is None:
        field = _STATUS_FOLDED.get(fold(name))
        if field is not None:
            return "name %s differs from field %s only in case (Go would read it as %s, other languages would not)" % (
                json.dumps(name, ensure_ascii=False), json.dumps(field), json.dumps(field))
        return None
    if text == "null":
        return None  # a Go reader leaves the field as it is
    if want == "string" and text.startswith('"'):
        return None
    if want == "int" and _INTEGER.fullmatch(text) and -(1 << 63) <= int(text) < 1 << 63:
        return None
    if want == "time" and len(text) >= 2 and text[0] == text[-1] == '"' and go_time_ok(text[1:-1]):
        return None
    what = {"string": "a string", "int": "an integer (a Go int)", "time": "an RFC 3339 time"}[want]
    return "member %s: %s is not %s, as Go's Status field of that name wants" % (json.dumps(name), text[:40], what)

_WS = " \t\n\r"


class _Duplicate(Exception):
    pass


class _Constant(Exception):
    pass


def _pairs(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        raise _Duplicate()
    return d


def _refuse_constant(name: str) -> Any:
    raise _Constant(name)


_strict = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_refuse_constant)
_plain = json.JSONDecoder(parse_constant=_refuse_constant)
_lenient = json.JSONDecoder()  # NaN and Infinity allowed: for syntax errors only
_same_text = json.JSONEncoder(ensure_ascii=True, allow_nan=True, separators=(",", ":")).encode
# json.decoder.scanstring reads one JSON string (after its opening quote);
# the standard library has it, its type stubs do not.
_scanstring: Callable[[str, int, bool], Tuple[str, int]] = getattr(json.decoder, "scanstring")
_surrogate_escape = re.compile(r"\\u[dD][89abcdefABCDEF]")


class Parsed:
    """A decoded document: see the module doc."""

    __slots__ = ("values", "raw", "pristine")

    def __init__(self) -> None:
        self.values: Dict[str, Any] = {}
        self.raw: Dict[str, str] = {}
        self.pristine: Dict[str, Any] = {}


def _byte_offset(text: str, i: int) -> int:
    return len(text[:i].encode("utf-8"))


def decode(data: bytes, path: str, op: str = "read", kind: str = JSON) -> Parsed:
    """Decodes a document's bytes, refusing (CorruptError, with the byte
    offset) what the Go package refuses and what Python would read
    differently from Go. As in Go, a syntax error anywhere in the document
    is reported before a repeated name or a lone surrogate."""
    try:
        return _decode(data, path, op, kind)
    except CorruptError as e:
        if e.syntax:
            raise
        text = data.decode("utf-8")
        try:
            _, end = _lenient.raw_decode(text, _skip(text, 0))
        except json.JSONDecodeError as s:
            raise CorruptError(path, _byte_offset(text, s.pos), s.msg, op) from None
        except (ValueError, RecursionError):
            raise e from None
        if _skip(text, end) != len(text):
            raise CorruptError(path, _byte_offset(text, _skip(text, end)), "data after the top-level object", op) from None
        raise


def _decode(data: bytes, path: str, op: str, kind: str) -> Parsed:
    def corrupt(i: int, reason: str, text: Optional[str] = None, syntax: bool = True) -> CorruptError:
        e = CorruptError(path, _byte_offset(text, i) if text is not None else i, reason, op)
        e.syntax = syntax
        return e

    if not data.strip(b" \t\n\r"):
        raise corrupt(0, "empty document")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise corrupt(e.start, "invalid UTF-8 (Go reads it as U+FFFD, Python refuses it)") from None
    n = len(text)
    i = _skip(text, 0)
    if text.startswith("null", i) and _skip(text, i + 4) == n:
        raise corrupt(0, "document is null, want a JSON object")
    if i >= n or text[i] != "{":
        _syntax(text, i, corrupt)
        raise corrupt(i, "not a JSON object", text)
    doc = Parsed()
    i = _skip(text, i + 1)
    if i < n and text[i] == "}":
        i += 1
    else:
        while True:
            if i >= n or text[i] != '"':
                raise corrupt(i, "expecting a member name in double quotes", text)
            key_at = i
            try:
                key, i = _scanstring(text, i + 1, True)
            except json.JSONDecodeError as e:
                raise corrupt(e.pos, e.msg, text) from None
            bad = _surrogate(text, key_at, i)
            if bad is not None:
                raise corrupt(bad[0], bad[1], text, False)
            i = _skip(text, i)
            if i >= n or text[i] != ":":
                raise corrupt(i, "expecting ':' after a member name", text)
            start = _skip(text, i + 1)
            value, end = _value(text, start, corrupt)
            if key in doc.values:
                raise corrupt(key_at, "duplicate name %s" % json.dumps(key, ensure_ascii=False), text, False)
            if kind == STATUS:
                problem = status_problem(key, text[start:end], value)
                if problem is not None:
                    raise corrupt(start if key in _STATUS_TYPE else key_at, problem, text, False)
            doc.values[key] = value
            doc.raw[key] = text[start:end]
            doc.pristine[key] = _plain.raw_decode(text, start)[0]
            i = _skip(text, end)
            if i < n and text[i] == ",":
                i = _skip(text, i + 1)
                continue
            if i < n and text[i] == "}":
                i += 1
                break
            raise corrupt(i, "expecting ',' or '}' after a member", text)
    i = _skip(text, i)
    if i != n:
        raise corrupt(i, "data after the top-level object", text)
    return doc


def _skip(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _WS:
        i += 1
    return i


def _syntax(text: str, i: int, corrupt: Any) -> None:
    """Raises the decoder's syntax error at or after i, if there is one."""
    try:
        _plain.raw_decode(text, i)
    except json.JSONDecodeError as e:
        raise corrupt(e.pos, e.msg, text) from None
    except (_Constant, ValueError):
        pass


def _value(text: str, start: int, corrupt: Any) -> Tuple[Any, int]:
    """Decodes the value at start: strictly (no repeated name, no NaN or
    Infinity, no lone surrogate) with the offset of what it refuses."""
    try:
        value, end = _strict.raw_decode(text, start)
    except json.JSONDecodeError as e:
        raise corrupt(e.pos, e.msg, text) from None
    except (_Duplicate, _Constant):
        # The hooks run before the whole value is read: a syntax error
        # further on comes first, as in the Go decoder.
        _syntax(text, start, corrupt)
        at, reason = _Scanner(text).first_problem(start)
        raise corrupt(at, reason, text, False) from None
    except (RecursionError, ValueError) as e:
        raise corrupt(start, "value Python cannot read: %s" % e, text, False) from None
    bad = _surrogate(text, start, end)
    if bad is not None:
        raise corrupt(bad[0], bad[1], text, False)
    return value, end


def _surrogate(text: str, start: int, end: int) -> Optional[Tuple[int, str]]:
    """The offset of the first \\u escape of a lone surrogate in
    text[start:end], a valid JSON text, and what it is."""
    if not _surrogate_escape.search(text, start, end):
        return None
    i = start
    while True:
        j = text.find("\\", i, end)
        if j < 0 or j + 1 >= end:
            return None
        if text[j + 1] != "u":
            i = j + 2
            continue
        r = int(text[j + 2:j + 6], 16)
        if r < 0xD800 or r > 0xDFFF:
            i = j + 6
            continue
        if r <= 0xDBFF and text.startswith("\\u", j + 6):
            try:
                lo = int(text[j + 8:j + 12], 16)
            except ValueError:
                lo = 0
            if 0xDC00 <= lo <= 0xDFFF:
                i = j + 12
                continue
        return j, "lone surrogate \\u%04x in a string (Go reads it as U+FFFD, other languages differently)" % r


class _Scanner:
    """A slow walk of a JSON value (that the decoder accepted up to its hooks)
    to find where a repeated name or a NaN/Infinity literal is."""

    def __init__(self, text: str) -> None:
        self.text = text

    def first_problem(self, i: int) -> Tuple[int, str]:
        try:
            self._value(i)
        except _Found as f:
            return f.at, f.reason
        return i, "malformed value"

    def _value(self, i: int) -> int:
        t = self.text
        i = _skip(t, i)
        c = t[i] if i < len(t) else ""
        if c == "{":
            seen = set()
            i = _skip(t, i + 1)
            if t[i] == "}":
                return i + 1
            while True:
                key, end = _scanstring(t, i + 1, True)
                if key in seen:
                    raise _Found(i, "duplicate name %s" % json.dumps(key, ensure_ascii=False))
                seen.add(key)
                i = _skip(t, end)
                i = self._value(i + 1)  # after ':'
                i = _skip(t, i)
                if t[i] == "}":
                    return i + 1
                i = _skip(t, i + 1)
        if c == "[":
            i = _skip(t, i + 1)
            if t[i] == "]":
                return i + 1
            while True:
                i = _skip(t, self._value(i))
                if t[i] == "]":
                    return i + 1
                i += 1
        if c == '"':
            return _scanstring(t, i + 1, True)[1]
        for name in ("NaN", "Infinity", "-Infinity"):
            if t.startswith(name, i):
                raise _Found(i, "%s is not JSON" % name)
        j = i
        while j < len(t) and t[j] not in _WS + ",]}":
            j += 1
        return j


class _Found(Exception):
    def __init__(self, at: int, reason: str) -> None:
        self.at = at
        self.reason = reason


# Encoding, as Go's encoding/json does it with HTML escaping off: the layout
# of status.Document, two-space indent, and Go's number and string forms.

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f",
            "\u2028": "\\u2028", "\u2029": "\\u2029"}
for _c in range(0x20):
    _ESCAPES.setdefault(chr(_c), "\\u%04x" % _c)
_HTML = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f\u2028\u2029]')
_NEEDS_ESCAPE_HTML = re.compile('["\\\\\x00-\x1f\u2028\u2029<>&]')


def encode_string(s: str, html: bool = False) -> str:
    """s as a JSON string, as Go writes it: escapes for ", \\, control
    characters, U+2028 and U+2029 (and <, >, & when html is set, as Go's
    json.Marshal does for member names); everything else as it is."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument("agentstate: string %r holds a lone surrogate, which JSON text cannot carry" % s) from None
    pattern, table = (_NEEDS_ESCAPE_HTML, dict(_ESCAPES, **_HTML)) if html else (_NEEDS_ESCAPE, _ESCAPES)
    return '"' + pattern.sub(lambda m: table[m.group(0)], s) + '"'


def encode_float(f: float) -> str:
    """f as Go's encoding/json writes a float64: the shortest decimal that
    reads back as f, in positional form for 1e-6 <= |f| < 1e21 and
    exponent form ("1e+21", "1e-7") otherwise."""
    if math.isnan(f) or math.isinf(f):
        raise InvalidArgument("agentstate: %r is not a JSON number" % f)
    sign, digits, exp = decimal.Decimal(repr(f)).as_tuple()
    assert isinstance(exp, int)
    ds = "".join(map(str, digits)).lstrip("0") or "0"
    exp += len("".join(map(str, digits))) - len(ds)  # leading zeros dropped
    # ds * 10**exp; strip trailing zeros into the exponent.
    stripped = ds.rstrip("0") or "0"
    exp += len(ds) - len(stripped)
    ds = stripped
    neg = "-" if sign else ""
    a = abs(f)
    if a != 0 and (a < 1e-6 or a >= 1e21):
        e = exp + len(ds) - 1
        mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        return "%s%se%s%s" % (neg, mant, "-" if e < 0 else "+", ("%02d" % abs(e)) if e >= 0 else str(abs(e)))
    if ds == "0":
        return neg + "0"
    if exp >= 0:
        return neg + ds + "0" * exp
    point = len(ds) + exp
    if point > 0:
        return neg + ds[:point] + "." + ds[point:]
    return neg + "0." + "0" * (-point) + ds


def encode_value(v: Any, level: int = 1) -> str:
    """v as indented JSON text at nesting level (the members of a document
    are at level 1), as Go's encoder followed by json.Indent(.., "", "  ")
    lays it out: empty objects and arrays stay "{}" and "[]"."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return int.__repr__(v)
    if isinstance(v, float):
        return encode_float(v)
    if isinstance(v, str):
        return encode_string(v)
    pad = "\n" + "  " * (level + 1)
    end = "\n" + "  " * level
    if isinstance(v, dict):
        if not v:
            return "{}"
        items = []
        for k, x in v.items():
            if not isinstance(k, str):
                raise InvalidArgument("agentstate: object key %r is not a string" % (k,))
            items.append(pad + encode_string(k) + ": " + encode_value(x, level + 1))
        return "{" + ",".join(items) + end + "}"
    if isinstance(v, (list, tuple)):
        if not v:
            return "[]"
        return "[" + ",".join(pad + encode_value(x, level + 1) for x in v) + end + "]"
    raise InvalidArgument("agentstate: a value of type %s cannot be stored in JSON" % type(v).__name__)


def same(a: Any, b: Any) -> bool:
    """Whether b is the same JSON value as a, type for type (1, 1.5, True
    and "1" all differ) and with its object members in the same order."""
    try:
        return bool(a == b) and _same_text(a) == _same_text(b)
    except (TypeError, ValueError, RecursionError):
        return False


def _order(name: str) -> Tuple[int, str]:
    return (_STATUS_INDEX.get(name, len(STATUS_MEMBERS)), name)


def go_time(ns: Optional[int] = None) -> str:
    """A time in UTC as Go's time.Time writes it in JSON (RFC 3339 with
    nanoseconds, trailing zeros dropped): "2026-01-02T15:04:05.5Z"."""
    if ns is None:
        ns = time.time_ns()
    secs, frac = divmod(ns, 10**9)
    stamp = datetime.datetime.fromtimestamp(secs, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        stamp += "." + ("%09d" % frac).rstrip("0")
    return stamp + "Z"


def encode(doc: Optional[Parsed], values: Any, kind: str, force: bool = False) -> Optional[bytes]:
    """The bytes of the document values as the caller left it, laid out
    as Go lays out a document of its kind (status: the members Status
    declares in its order, then the others sorted by name; json: all sorted
    by name; two-space indent, final newline), with every member it did
    not change kept verbatim; None when nothing changed (unless force). A
    status document is refused members Go's Status could not read, and gets
    updated_at stamped when anything changed, unless the caller changed,
    added or deleted updated_at itself, as Go's StatusDocument does."""
    if not isinstance(values, dict):
        raise InvalidArgument("agentstate: a document must be a dict, not %s" % type(values).__name__)
    raw = doc.raw if doc is not None else {}
    pristine = doc.pristine if doc is not None else {}
    out: Dict[str, str] = {}
    changed = force or set(values) != set(raw)
    for name, v in values.items():
        if not isinstance(name, str):
            raise InvalidArgument("agentstate: member name %r is not a string" % (name,))
        if name in raw and same(pristine[name], v):
            out[name] = raw[name]
            continue
        text = encode_value(v)
        if kind == STATUS:
            problem = status_problem(name, text, v)
            if problem is not None:
                raise InvalidArgument("agentstate: " + problem)
        out[name] = text
        changed = True
    if not changed:
        return None
    if kind == STATUS and out.get("updated_at") == raw.get("updated_at"):
        values["updated_at"] = go_time()
        out["updated_at"] = encode_string(values["updated_at"])
    return layout(out, kind)


def layout(members: Dict[str, str], kind: str) -> bytes:
    if not members:
        return b"{}\n"
    order = sorted(members, key=_order) if kind == STATUS else sorted(members)
    parts = ["\n  " + encode_string(name, html=True) + ": " + members[name] for name in order]
    return ("{" + ",".join(parts) + "\n}\n").encode("utf-8")


# Raw values inside a member, for a module that models a document's nested
# objects (a registry's slots) and keeps the values it does not know as
# they were read.

def elements(raw: str) -> List[str]:
    """The texts of the elements of raw, a JSON array that decode
    accepted."""
    i = _skip(raw, 1)
    out: List[str] = []
    if raw[i] == "]":
        return out
    while True:
        end = _plain.raw_decode(raw, i)[1]
        out.append(raw[i:end])
        i = _skip(raw, end)
        if raw[i] == "]":
            return out
        i = _skip(raw, i + 1)


def object_members(raw: str) -> List[Tuple[str, str]]:
    """The names and value texts of the members of raw, a JSON object that
    decode accepted, in their order."""
    i = _skip(raw, 1)
    out: List[Tuple[str, str]] = []
    if raw[i] == "}":
        return out
    while True:
        name, i = _scanstring(raw, i + 1, True)
        i = _skip(raw, _skip(raw, i) + 1)  # after ':'
        end = _plain.raw_decode(raw, i)[1]
        out.append((name, raw[i:end]))
        i = _skip(raw, end)
        if raw[i] == "}":
            return out
        i = _skip(raw, i + 1)


def reindent(raw: str, level: int) -> str:
    """raw, a JSON value that decode accepted, as Go writes a value it keeps
    as read (a json.RawMessage) at nesting level: compacted, every token as
    it is, then indented as encode_value indents."""
    out: List[str] = []
    depth = level
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c in _WS:
            i += 1
        elif c == '"':
            end = _scanstring(raw, i + 1, False)[1]
            out.append(raw[i:end])
            i = end
        elif c in "{[":
            j = _skip(raw, i + 1)
            if raw[j] in "}]":
                out.append(c + raw[j])
                i = j + 1
            else:
                depth += 1
                out.append(c + "\n" + "  " * depth)
                i = j
        elif c in "}]":
            depth -= 1
            out.append("\n" + "  " * depth + c)
            i += 1
        elif c == ",":
            out.append(",\n" + "  " * depth)
            i += 1
        elif c == ":":
            out.append(": ")
            i += 1
        else:
            j = i
            while j < n and raw[j] not in _WS + ",:]}":
                j += 1
            out.append(raw[i:j])
            i = j
    return "".join(out)


def go_time_normal(s: str) -> Tuple[str, int]:
    """A time that go_time_ok accepts as Go's time.Time writes it back
    (RFC 3339 with up to nine fractional digits, trailing zeros dropped,
    "Z" for a zero offset), and its instant in nanoseconds since
    0001-01-01T00:00:00Z (0: Go's zero time, which Go leaves out of a
    document). ValueError for an offset Go cannot write (24 hours or
    more)."""
    m = _RFC3339.fullmatch(s)
    if m is None:
        raise ValueError("not an RFC 3339 time")
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    digits = (m.group(7) or ".")[1:10]
    nanos = int(digits.ljust(9, "0")) if digits else 0
    offset = 0
    zone = "Z"
    if m.group(8) != "Z":
        offset = int(m.group(9)) * 60 + int(m.group(10))
        if offset >= 24 * 60:
            raise ValueError("time zone offset of 24 hours or more")
        if m.group(8)[0] == "-":
            offset = -offset
        if offset:
            zone = "%s%02d:%02d" % ("-" if offset < 0 else "+", abs(offset) // 60, abs(offset) % 60)
    frac = ("." + "%09d" % nanos).rstrip("0") if nanos else ""
    text = "%04d-%02d-%02dT%02d:%02d:%02d%s%s" % (year, month, day, hour, minute, second, frac, zone)
    secs = ((_days(year, month, day) * 24 + hour) * 60 + minute) * 60 + second - offset * 60
    return text, secs * 10**9 + nanos


def _days(year: int, month: int, day: int) -> int:
    """Days from 0001-01-01 to the date, in the proleptic Gregorian
    calendar (year 0 and earlier give negative numbers)."""
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 306  # 0001-01-01 is day 306 of era 0 counted from 0000-03-01
