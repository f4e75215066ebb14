"""scripts/oracle_constraints.py (docs/quality.md, Lexical constraints): the phrases it picks are
the line's own words, as many as asked and apart, the same for the same seed; count holds a
phrase only as whole words; a bad line is a one-line error naming the file and line.

Run by ctest (oracle_constraints) with Debian's python3 from tests/.
"""
import json
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "oracle_constraints.py")
REFERENCE = ["Ein kleines Mädchen in einem rosa Kleid läuft am Strand.",
             "Zwei Hunde spielen im Schnee , einer mit einem Ball.",
             "Ja."]


def run(*args):
    return subprocess.run(["/usr/bin/python3", SCRIPT, *args], capture_output=True, text=True)


class OracleConstraints(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def write(self, name, lines):
        path = os.path.join(self.dir.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
        return path

    def test_picked_phrases_are_the_lines_words_apart_and_seeded(self):
        reference = self.write("ref", REFERENCE)
        picked = run("pick", reference, "--phrases", "2", "--max-words", "3", "--seed", "7")
        self.assertEqual(picked.returncode, 0, picked.stderr)
        lists = [json.loads(line) for line in picked.stdout.splitlines()]
        self.assertEqual([len(phrases) for phrases in lists], [2, 2, 1])  # "Ja." has one word
        for line, phrases in zip(REFERENCE, lists):
            words = line.replace(".", "").replace(",", "").split()
            for phrase in phrases:
                self.assertTrue(1 <= len(phrase.split()) <= 3, phrase)
                self.assertIn(" %s " % phrase.replace(" ,", ""), " %s " % " ".join(words))
            if len(phrases) == 2:  # apart: neither inside the other, and in the line's order
                self.assertLess(line.index(phrases[0]) + len(phrases[0]), line.index(phrases[1]) + 1)
        self.assertEqual(run("pick", reference, "--phrases", "2", "--max-words", "3", "--seed", "7").stdout,
                         picked.stdout)
        self.assertNotEqual(run("pick", reference, "--phrases", "2", "--max-words", "3", "--seed", "8").stdout,
                            picked.stdout)
        constraints = self.write("constraints", picked.stdout.splitlines())
        self.assertEqual(run("count", constraints, reference).stdout,
                         "phrases held: 5 of 5 (100.0%), lines holding all: 3 of 3\n")

    def test_count_holds_whole_words_only(self):
        constraints = self.write("constraints", ['["Hund"]', '["roten Ball", "Hund"]', "", "[]", '["Hund der", "Hund"]',
                                                 '["Hund"]'])
        hyp = self.write("hyp", ["Ein Hund.", "Hunde mit einem roten Ball", "Nichts", "Auch nichts", "Ein Hund, der",
                                 "Ein Hund-Welpe"])
        self.assertEqual(run("count", constraints, hyp).stdout,
                         "phrases held: 3 of 6 (50.0%), lines holding all: 3 of 6\n")

    def test_a_bad_line_names_the_file_and_line(self):
        constraints = self.write("constraints", ['["Hund"]', '{"Hund": 1}'])
        hyp = self.write("hyp", ["Hund", "Hund"])
        result = run("count", constraints, hyp)
        self.assertNotEqual(result.returncode, 0)
        self.assertEqual(result.stderr, "oracle_constraints.py: %s:2: not a list of strings\n" % constraints)
        short = self.write("short", ["Hund"])
        self.assertIn("has 2 lines", run("count", constraints, short).stderr)


if __name__ == "__main__":
    unittest.main()
