"""scripts/synthetic_corpus.py, the synthetic corpus of docs/scaling.md: every line is two
Multi30k training pairs joined, the same seed gives the same files, gzipped or not, and bad
input is a one-line error naming the file.

Run by ctest (synthetic_corpus) with Debian's python3 from tests/.
"""
import gzip
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "synthetic_corpus.py")


def run(*args):
    return subprocess.run(["/usr/bin/python3", SCRIPT, *args], capture_output=True, text=True)


def lines_of(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


class SyntheticCorpus(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)
        # A small corpus of distinct pairs, so that every output line names its two pairs.
        self.corpus = os.path.join(self.dir.name, "corpus")
        os.mkdir(self.corpus)
        for lang, word in (("en", "dog"), ("de", "Hund")):
            with gzip.open(os.path.join(self.corpus, "train.%s.gz" % lang), "wt", encoding="utf-8") as f:
                f.write("".join("%s %d\n" % (word, i) for i in range(50)))

    def make(self, name, *args):
        out = os.path.join(self.dir.name, name)
        result = run("--corpus", self.corpus, "--out", out, *args)
        self.assertEqual(result.returncode, 0, result.stderr)
        return out

    def test_each_line_joins_two_pairs_of_the_corpus(self):
        out = self.make("a", "--pairs", "300")
        src, tgt = lines_of(out + ".en"), lines_of(out + ".de")
        self.assertEqual((len(src), len(tgt)), (300, 300))
        for s, t in zip(src, tgt):
            i, j = s.split()[1], s.split()[3]
            self.assertEqual(s, "dog %s dog %s" % (i, j))
            self.assertEqual(t, "Hund %s Hund %s" % (i, j))  # the same pairs on both sides
        self.assertGreater(len(set(src)), 250, "random pairs, not the same ones")

    def test_the_seed_decides_the_files_gzipped_or_not(self):
        plain = self.make("plain", "--pairs", "100", "--seed", "7")
        zipped = self.make("zipped", "--pairs", "100", "--seed", "7", "--gzip")
        other = self.make("other", "--pairs", "100", "--seed", "8")
        for lang in ("en", "de"):
            self.assertEqual(lines_of(zipped + "." + lang + ".gz"), lines_of(plain + "." + lang))
            self.assertNotEqual(lines_of(other + "." + lang), lines_of(plain + "." + lang))

    def test_bad_input_is_a_one_line_error_naming_the_file(self):
        path = os.path.join(self.corpus, "train.en.gz")
        with gzip.open(path, "wb") as f:
            f.write(b"dog\nStra\xdfe\n")
        result = run("--corpus", self.corpus, "--out", os.path.join(self.dir.name, "x"), "--pairs", "5")
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stderr, "synthetic_corpus.py: %s:2: invalid UTF-8\n" % path)
        missing = os.path.join(self.dir.name, "none")
        result = run("--corpus", missing, "--out", os.path.join(self.dir.name, "x"), "--pairs", "5")
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stderr.count("\n"), 1, result.stderr)
        self.assertIn(os.path.join(missing, "train.en.gz") + ": cannot read", result.stderr)


if __name__ == "__main__":
    unittest.main()
