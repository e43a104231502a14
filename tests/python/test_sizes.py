"""The Python binding's size rule is the C one: tests/common/sizes.txt, the table the C parser's test
runs (tests/common/test_sizes.c), through h5pack.parse_size; and Loader(cache=...) goes through it.
Run by ctest with PYTHONPATH=python."""
import os
import sys
import unittest

try:
    import h5pack
    from h5pack import _convert
except ImportError as e:  # torch or numpy missing
    print(f"skipped: {e}")
    sys.exit(77)

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common", "sizes.txt")


def table_rows():
    """(line number, expected result, input) of every row: RESULT "INPUT" (see the table's header)."""
    with open(TABLE, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            first, last = line.index('"'), line.rindex('"')
            assert last > first and line[first - 1] == " ", f"malformed row {no}: {line}"
            yield no, line[:first - 1], line[first + 1:last]


class SameTableAsC(unittest.TestCase):
    def test_table(self):
        rows = list(table_rows())
        self.assertGreaterEqual(len(rows), 50)
        for no, result, text in rows:
            with self.subTest(line=no, text=text):
                if result.startswith("error:"):
                    with self.assertRaises(ValueError) as cm:
                        h5pack.parse_size(text)
                    self.assertEqual(cm.exception.kind, result[len("error:"):])
                else:
                    self.assertEqual(h5pack.parse_size(text), int(result))


class PythonValues(unittest.TestCase):
    def test_numbers(self):
        self.assertEqual(h5pack.parse_size(0), 0)
        self.assertEqual(h5pack.parse_size(1 << 30), 1 << 30)
        self.assertEqual(h5pack.parse_size(2.0 ** 30), 1 << 30)  # a whole float is a number
        self.assertEqual(h5pack.parse_size((1 << 64) - 1), (1 << 64) - 1)
        for bad, kind in ((-1, "negative"), (1 << 64, "overflow"), (1.5, "fraction"), (True, "syntax"),
                          (None, "syntax"), (b"1K", "syntax")):
            with self.subTest(value=bad):
                with self.assertRaises(ValueError) as cm:
                    h5pack.parse_size(bad)
                self.assertEqual(cm.exception.kind, kind)

    def test_message_names_value_and_reason(self):
        with self.assertRaises(ValueError) as cm:
            h5pack.parse_size("64X")
        self.assertIn("'64X'", str(cm.exception))
        self.assertIn("unknown suffix 'X' (use K, M, G or T", str(cm.exception))

    def test_loader_cache_uses_the_rule(self):
        # The size is checked before the file is opened: a bad one fails with the rule's words.
        with self.assertRaises(ValueError) as cm:
            h5pack.Loader("/nonexistent/file.h5", cache="1X", device="cpu")
        self.assertIn("unknown suffix 'X'", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
