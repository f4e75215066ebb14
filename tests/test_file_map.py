"""docs/design.md §6 is the one file map of the sources: every source file is named in it, and
every file it names exists; and no source file is longer than the layout rule's 450 lines
(CONTRIBUTING.md; run by ctest as `file_map`)."""
import os
import re
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def sources():
    for top in ("src", "include", "python"):
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith((".cpp", ".h", ".py", ".pyi")):
                    yield os.path.relpath(os.path.join(folder, name), ROOT)


class FileMap(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        with open(os.path.join(ROOT, "docs", "design.md"), encoding="utf-8") as f:
            self.design = f.read()

    def test_every_source_file_is_in_the_map(self):
        # a header is named by its source file when it mirrors one (include/ mirrors src/)
        named = set(re.findall(r"`((?:src|include|python)/[^`\s]+)`", self.design))
        missing = []
        for path in sorted(sources()):
            mirrored = re.sub(r"^include/rnnsearch/(.*)\.h$", r"src/\1.cpp", path)
            if path not in named and mirrored not in named:
                missing.append(path)
        self.assertEqual(missing, [], "sources not in docs/design.md's file map")

    def test_every_file_the_map_names_exists(self):
        named = set(re.findall(r"`((?:src|include|python|tests|scripts|cmake)/[^`\s*]+\.(?:cpp|h|py|sh|pyi|cmake|in))`",
                               self.design))
        absent = sorted(p for p in named if not os.path.exists(os.path.join(ROOT, p)))
        self.assertEqual(absent, [], "files docs/design.md names that do not exist")


    def test_no_source_file_is_over_450_lines(self):
        long = []
        for path in sorted(sources()):
            with open(os.path.join(ROOT, path), encoding="utf-8") as f:
                lines = sum(1 for _ in f)
            if lines > 450:
                long.append(f"{path}: {lines} lines")
        self.assertEqual(long, [], "source files over 450 lines (CONTRIBUTING.md: split them by concern)")


if __name__ == "__main__":
    unittest.main()
