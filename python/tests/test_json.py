"""Decoding refuses what Go refuses (with the byte offset), and encoding
writes what Go writes. The expected encodings were printed by Go's
encoding/json; internal/proof/status checks random values against Go too."""

from __future__ import annotations

import json
import unittest

from agentstate import CorruptError, InvalidArgument
from agentstate._json import decode, encode, encode_float, encode_string, encode_value, go_time


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
        # Status's members first in its order, then the others sorted;
        # unchanged members verbatim, changed ones re-encoded.
        doc = decode(b'{"zz": [1,  2], "runs": 1, "aa": "x", "status": "queued", "keep": 2.50}', "d")
        values = doc.values
        values["runs"] = 2
        values["new"] = {"k": 1}
        out = encode(doc, values, False)
        assert out is not None
        self.assertEqual(
            b'{\n  "status": "queued",\n  "runs": 2,\n  "aa": "x",\n  "keep": 2.50,\n  "new": {\n    "k": 1\n  },\n  "zz": [1,  2]\n}\n',
            out,
        )

    def test_unchanged_is_not_written(self) -> None:
        doc = decode(b'{"a": 1.0, "b": [1,2], "c": {"x": 1, "y": 2}}', "d")
        self.assertIsNone(encode(doc, doc.values, True))
        doc.values["a"] = 1.0
        self.assertIsNone(encode(doc, doc.values, False))
        self.assertIsNone(encode(None, {}, False))

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
                out = encode(doc, doc.values, False)
                self.assertEqual(('{\n  "a": %s\n}\n' % want).encode(), out)

    def test_stamp(self) -> None:
        doc = decode(b'{"runs": 1, "updated_at": "2020-01-01T00:00:00Z"}', "d")
        doc.values["runs"] = 2
        out = encode(doc, doc.values, True)
        assert out is not None
        self.assertNotIn(b"2020-01-01", out)
        self.assertRegex(doc.values["updated_at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z$")
        # A caller that sets updated_at itself keeps its value.
        doc = decode(b'{"runs": 1, "updated_at": "2020-01-01T00:00:00Z"}', "d")
        doc.values["updated_at"] = "2021-01-01T00:00:00Z"
        self.assertIn(b'"2021-01-01T00:00:00Z"', encode(doc, doc.values, True) or b"")
        # ... or deletes it.
        doc = decode(b'{"runs": 1, "updated_at": "2020-01-01T00:00:00Z"}', "d")
        del doc.values["updated_at"]
        self.assertNotIn(b"updated_at", encode(doc, doc.values, True) or b"")

    def test_go_time(self) -> None:
        self.assertEqual("2009-11-10T23:00:00Z", go_time(1257894000 * 10**9))
        self.assertEqual("2009-11-10T23:00:00.5Z", go_time(1257894000 * 10**9 + 500000000))
        self.assertEqual("2009-11-10T23:00:00.000000001Z", go_time(1257894000 * 10**9 + 1))


if __name__ == "__main__":
    unittest.main()
