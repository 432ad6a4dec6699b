"""Decoding refuses what Go refuses (with the byte offset), and encoding
writes what Go writes. The expected encodings were printed by Go's
encoding/json; internal/proof/status checks random values against Go too."""

from __future__ import annotations

import json
import unittest

from agentstate import CorruptError, InvalidArgument
from agentstate._json import JSON, STATUS, decode, encode, encode_float, encode_string, encode_value, go_time, go_time_ok, kind_of


class DecodeTest(unittest.TestCase):
    def refused(self, data: bytes, offset: int, reason: str) -> None:
        with self.assertRaises(CorruptError) as cm:
            decode(data, "doc.json")
        self.assertEqual(offset, cm.exception.offset, cm.exception)
        self.assertIn(reason, cm.exception.reason)
        self.assertIn("doc.json", str(cm.exception))

    def test_refusals_with_offsets(self) -> None:
        for data, offset, reason in [
            (b"", 0, "empty"),
            (b" \n\t", 0, "empty"),
            (b"null", 0, "null"),
            (b"  null \n", 0, "null"),
            (b"[1]", 0, "not a JSON object"),
            (b'"s"', 0, "not a JSON object"),
            (b'{"a": 1', 7, "expecting"),
            (b'{"a": 1}x', 8, "data after"),
            (b'{"a": 1, "a": 2}', 9, "duplicate name \"a\""),
            (b'{"a": {"b": 1, "c": [{"d": 1, "d": 2}]}}', 30, "duplicate name \"d\""),
            (b'{"a": "\xff"}', 7, "invalid UTF-8"),
            (b'{"\xc3": 1}', 2, "invalid UTF-8"),
            (b'{"a": "x\\ud800"}', 8, "lone surrogate \\ud800"),
            (b'{"x\\udc00": 1}', 3, "lone surrogate"),
            (b'{"a": ["ok", "\\ud800\\u0041"]}', 14, "lone surrogate"),
            (b'{"a": NaN}', 6, "NaN"),
            (b'{"a": [1, -Infinity]}', 10, "Infinity"),
            (b'\xef\xbb\xbf{"a": 1}', 0, "Expecting value"),  # a BOM is not JSON
            (b'{"a": 1, "b": {"c": 1, "c": 2}, "d": x}', 37, "Expecting value"),  # the syntax error comes first, as in Go
            (b'{"\xc3\xa9": 1, "a": "\xc3\xa9", "a": 2}', 21, "duplicate"),  # offsets in bytes, not characters
        ]:
            with self.subTest(data=data):
                self.refused(data, offset, reason)

    def test_accepts(self) -> None:
        for data, want in [
            (b"{}", {}),
            (b' { } \n', {}),
            (b'{"a": "\\ud83d\\ude00"}', {"a": "\U0001F600"}),
            (b'{"a": "\\\\ud800"}', {"a": "\\ud800"}),  # an escaped backslash, then text
            (b'{"a": {"b": 1}, "c": {"b": 2}}', {"a": {"b": 1}, "c": {"b": 2}}),
            (b'{"big": 123456789012345678901234567890}', {"big": 123456789012345678901234567890}),
        ]:
            with self.subTest(data=data):
                self.assertEqual(want, decode(data, "d").values)

    def test_raw_kept(self) -> None:
        doc = decode(b'{"keep":[1, 2.50,"three"],  "nested": {"a": null}}', "d")
        self.assertEqual('[1, 2.50,"three"]', doc.raw["keep"])
        self.assertEqual('{"a": null}', doc.raw["nested"])


class EncodeTest(unittest.TestCase):
    def test_floats_as_go(self) -> None:
        for f, want in [
            (0.0, "0"), (-0.0, "-0"), (1.0, "1"), (1.5, "1.5"), (100.0, "100"), (1e20, "100000000000000000000"),
            (1e21, "1e+21"), (1.23456789e28, "1.23456789e+28"), (1e-6, "0.000001"), (1e-7, "1e-7"),
            (1.5e-7, "1.5e-7"), (0.1, "0.1"), (123.456, "123.456"), (1e100, "1e+100"), (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"), (12345678.9, "12345678.9"), (1e-10, "1e-10"),
            (-2.5e-8, "-2.5e-8"),
        ]:
            with self.subTest(f=f):
                self.assertEqual(want, encode_float(f))
                self.assertEqual(f, json.loads(want))
        for bad in (float("nan"), float("inf"), float("-inf")):
            with self.assertRaises(InvalidArgument):
                encode_float(bad)

    def test_strings_as_go(self) -> None:
        for s, value, name in [
            ('a"b\\c', '"a\\"b\\\\c"', '"a\\"b\\\\c"'),
            ("\n\r\t\b\f", '"\\n\\r\\t\\b\\f"', '"\\n\\r\\t\\b\\f"'),
            ("\x00\x01\x1f\x7f", '"\\u0000\\u0001\\u001f\x7f"', '"\\u0000\\u0001\\u001f\x7f"'),
            ("<>&", '"<>&"', '"\\u003c\\u003e\\u0026"'),
            ("\u2028\u2029", '"\\u2028\\u2029"', '"\\u2028\\u2029"'),
            ("é😀", '"é😀"', '"é😀"'),
        ]:
            with self.subTest(s=s):
                self.assertEqual(value, encode_string(s))
                self.assertEqual(name, encode_string(s, html=True))
        with self.assertRaises(InvalidArgument):
            encode_string("\ud800")

    def test_values(self) -> None:
        self.assertEqual('{\n    "a": [\n      1,\n      true,\n      null\n    ],\n    "b": {}\n  }', encode_value({"a": [1, True, None], "b": {}}))
        self.assertEqual("[]", encode_value(()))
        for bad in ({1: 2}, {"a": {1, 2}}, object(), b"bytes"):
            with self.subTest(bad=bad), self.assertRaises(InvalidArgument):
                encode_value(bad)

    def test_layout(self) -> None:
        # Unchanged members verbatim, changed ones re-encoded; a status
        # document has Status's members first in its order, then the others
        # sorted; any other JSON object has them all sorted.
        raw = b'{"zz": [1,  2], "runs": 1, "aa": "x", "status": "queued", "keep": 2.50}'
        u = b'"updated_at": "2026-01-02T03:04:05Z"'
        for kind, want in [
            (STATUS, b'{\n  "status": "queued",\n  ' + u + b',\n  "runs": 2,\n  "aa": "x",\n  "keep": 2.50,\n  "new": {\n    "k": 1\n  },\n  "zz": [1,  2]\n}\n'),
            (JSON, b'{\n  "aa": "x",\n  "keep": 2.50,\n  "new": {\n    "k": 1\n  },\n  "runs": 2,\n  "status": "queued",\n  ' + u + b',\n  "zz": [1,  2]\n}\n'),
        ]:
            doc = decode(raw, "d", kind=kind)
            doc.values["runs"] = 2
            doc.values["new"] = {"k": 1}
            doc.values["updated_at"] = "2026-01-02T03:04:05Z"  # set by the caller: not stamped
            self.assertEqual(want, encode(doc, doc.values, kind))

    def test_unchanged_is_not_written(self) -> None:
        for kind in (STATUS, JSON):
            doc = decode(b'{"a": 1.0, "b": [1,2], "c": {"x": 1, "y": 2}}', "d", kind=kind)
            self.assertIsNone(encode(doc, doc.values, kind))
            doc.values["a"] = 1.0
            self.assertIsNone(encode(doc, doc.values, kind))
            self.assertIsNone(encode(None, {}, kind))

    def test_type_changes_are_changes(self) -> None:
        for member, raw, new, want in [
            ("a", "1", True, "true"),
            ("a", "true", 1, "1"),
            ("a", '"1"', 1, "1"),
            ("a", '{"x": 1, "y": 2}', {"y": 2, "x": 1}, '{\n    "y": 2,\n    "x": 1\n  }'),
        ]:
            with self.subTest(raw=raw, new=new):
                doc = decode(('{"%s": %s}' % (member, raw)).encode(), "d")
                doc.values[member] = new
                out = encode(doc, doc.values, JSON)
                self.assertEqual(('{\n  "a": %s\n}\n' % want).encode(), out)

    def test_stamp(self) -> None:
        # A status document's updated_at is set when anything changed...
        doc = decode(b'{"runs": 1, "updated_at": "2020-01-01T00:00:00Z"}', "d", kind=STATUS)
        doc.values["runs"] = 2
        out = encode(doc, doc.values, STATUS)
        assert out is not None
        self.assertNotIn(b"2020-01-01", out)
        self.assertTrue(go_time_ok(doc.values["updated_at"]), doc.values["updated_at"])
        # ... unless the caller sets it itself...
        doc = decode(b'{"runs": 1, "updated_at": "2020-01-01T00:00:00Z"}', "d", kind=STATUS)
        doc.values["updated_at"] = "2021-01-01T00:00:00Z"
        self.assertIn(b'"2021-01-01T00:00:00Z"', encode(doc, doc.values, STATUS) or b"")
        # ... or deletes it.
        doc = decode(b'{"runs": 1, "updated_at": "2020-01-01T00:00:00Z"}', "d", kind=STATUS)
        del doc.values["updated_at"]
        self.assertNotIn(b"updated_at", encode(doc, doc.values, STATUS) or b"")
        # Any other JSON object: updated_at is a member like any other.
        doc = decode(b'{"runs": 1, "updated_at": "2020-01-01T00:00:00Z"}', "d")
        doc.values["runs"] = 2
        self.assertIn(b"2020-01-01", encode(doc, doc.values, JSON) or b"")

    def test_status_rules(self) -> None:
        # What Go's Status cannot read is refused in a status document: when
        # read (with the offset) and when written; a JSON object takes it.
        for raw, offset in [
            (b'{"runs": "n/a"}', 9),
            (b'{"runs": 1.5}', 9),
            (b'{"runs": 1e2}', 9),
            (b'{"runs": 9223372036854775808}', 9),
            (b'{"status": 3}', 11),
            (b'{"started_at": "2026-13-01T00:00:00Z"}', 15),
            (b'{"ok": 1, "Runs": 1}', 10),
            (b'{"\u017ftatus": "x"}', 1),
        ]:
            with self.subTest(raw=raw):
                with self.assertRaises(CorruptError) as cm:
                    decode(raw, "d", kind=STATUS)
                self.assertEqual(offset, cm.exception.offset, cm.exception)
                decode(raw, "d", kind=JSON)
        ok = decode(b'{"runs": -3, "pid": null, "status": "x", "started_at": "2026-02-28T23:59:59.5+01:00", "Other": 1}', "d", kind=STATUS)
        for name, bad in [("runs", "3"), ("runs", 1.5), ("runs", True), ("status", 1), ("updated_at", "yesterday"), ("RUNS", 1)]:
            with self.subTest(name=name, bad=bad), self.assertRaises(InvalidArgument):
                encode(ok, dict(ok.values, **{name: bad}), STATUS)
        self.assertIsNotNone(encode(ok, dict(ok.values, runs=3.0), STATUS))  # written "3": an int to Go

    def test_go_time_ok(self) -> None:
        # Go's time.Time reads what time.Parse(time.RFC3339, ...) reads
        # (internal/proof/status checks this against Go with random times).
        for s, ok in [
            ("2026-01-02T03:04:05Z", True), ("2026-01-02T03:04:05.123456789Z", True), ("2026-01-02T03:04:05.1234567891Z", True),
            ("2026-01-02T03:04:05+23:59", True), ("2024-02-29T00:00:00Z", True), ("0000-01-01T00:00:00Z", True),
            ("2026-01-02T3:04:05Z", True), ("2026-01-02T03:04:05,5Z", True), ("2026-01-02T03:04:05+24:60", True),
            ("2025-02-29T00:00:00Z", False), ("2026-01-02T24:00:00Z", False), ("2026-01-02T03:04:60Z", False),
            ("2026-01-02T03:04:05+25:00", False), ("2026-01-02T03:04:05", False), ("2026-01-02 03:04:05Z", False),
            ("2026-01-02t03:04:05Z", False), ("2026-01-02T03:04:05z", False), ("2026-1-02T03:04:05Z", False),
            ("2026-01-02T03:04:05.Z", False), ("2026-01-02T003:04:05Z", False), ("", False),
        ]:
            with self.subTest(s=s):
                self.assertEqual(ok, go_time_ok(s))
        # Go does not decode escapes in a time: "\u0032026..." is no time.
        with self.assertRaises(CorruptError):
            decode(b'{"started_at": "\\u0032026-01-02T03:04:05Z"}', "d", kind=STATUS)

    def test_kind_of(self) -> None:
        self.assertEqual(STATUS, kind_of("ws/t/status.json", None))
        self.assertEqual(JSON, kind_of("ws/registry.json", None))
        self.assertEqual(JSON, kind_of("ws/t/status.json", "json"))
        with self.assertRaises(InvalidArgument):
            kind_of("x", "yaml")

    def test_go_time(self) -> None:
        self.assertEqual("2009-11-10T23:00:00Z", go_time(1257894000 * 10**9))
        self.assertEqual("2009-11-10T23:00:00.5Z", go_time(1257894000 * 10**9 + 500000000))
        self.assertEqual("2009-11-10T23:00:00.000000001Z", go_time(1257894000 * 10**9 + 1))


if __name__ == "__main__":
    unittest.main()
