"""Translator.translate's steering arguments (docs/python.md; issue 81): a wrong shape is a TypeError
saying what the argument wants, a phrase the search cannot take a ValueError naming the sentence, as
translate refuses those lines of its files; the translator stays usable after each.

Run by ctest (python_steering) under pytest with PYTHONPATH=build/python, RNNSEARCH_BINARY and
RNNSEARCH_SOURCE_DIR set, as test_python.py.
"""
import os
import shutil
import tempfile
import unittest

import rnnsearch
from rnnsearch_binary import train_tiny

WORK = None
TRANSLATOR = None
LINES = ["a dog runs .", "two men ."]


def setUpModule():
    global WORK, TRANSLATOR
    WORK = tempfile.mkdtemp(prefix="rnnsearch_steering_")
    TRANSLATOR = rnnsearch.Translator(train_tiny(os.path.join(WORK, "words")), threads=1)


def tearDownModule():
    shutil.rmtree(WORK, ignore_errors=True)


class SteeringArguments(unittest.TestCase):
    def tearDown(self):
        self.assertTrue(TRANSLATOR.translate(LINES[:1])[0].hypotheses, "still usable")

    def test_constraints_as_a_string_is_a_type_error_saying_what_it_wants(self):
        # was: "sentences and constraints differ in length: 2 and 4 sentences"
        for name in ("constraints", "avoid"):
            with self.assertRaisesRegex(TypeError, "^%s must be a list with one list of phrases per sentence, "
                                                   r"e.g. \[\[\"Hund\"\], \[\]\], not str$" % name):
                TRANSLATOR.translate(LINES, **{name: "hund"})
        with self.assertRaisesRegex(TypeError, "^constraints must be a list with one list of phrases per sentence"):
            TRANSLATOR.translate(LINES, constraints=5)

    def test_a_sentence_without_a_list_is_named(self):
        # was: "'NoneType' object is not iterable", naming no index
        with self.assertRaisesRegex(TypeError, r"^constraints\[0\] must be a list of phrases \(str\), not NoneType"):
            TRANSLATOR.translate(LINES, constraints=[None, []])
        with self.assertRaisesRegex(TypeError, r"^avoid\[1\] must be a list of phrases \(str\), not str"):
            TRANSLATOR.translate(LINES, avoid=[[], "hund"])
        with self.assertRaisesRegex(TypeError, r"^constraints\[1\]\[0\] must be str or bytes, not int"):
            TRANSLATOR.translate(LINES, constraints=[[], [3]])
        with self.assertRaisesRegex(rnnsearch.Error, "sentences and avoid differ in length: 2 and 1 sentences"):
            TRANSLATOR.translate(LINES, avoid=[[]])

    def test_a_constraint_that_is_also_to_avoid_is_a_value_error_naming_the_sentence(self):
        # was: no error, the output a phrase repeated up to the length cap
        with self.assertRaisesRegex(ValueError, '^sentences\\[1\\]: "hund" is both a constraint and a phrase to avoid$'):
            TRANSLATOR.translate(LINES, constraints=[[], ["hund"]], avoid=[["hund"], ["mann", "hund"]])
        with self.assertRaisesRegex(ValueError, '^sentences\\[0\\]: the constraint "ein hund" holds the phrase to avoid "hund"$'):
            TRANSLATOR.translate(LINES, constraints=[["ein hund"], []], avoid=[["hund"], []])

    def test_invalid_utf8_phrases_are_a_value_error_naming_the_sentence(self):
        # was: an InputWarning and an empty translation
        with self.assertRaisesRegex(ValueError, "^sentences\\[1\\]: a constraint is not valid UTF-8$"):
            TRANSLATOR.translate(LINES, constraints=[[], [b"hund \xff"]])
        with self.assertRaisesRegex(ValueError, "^sentences\\[0\\]: a phrase to avoid is not valid UTF-8$"):
            TRANSLATOR.translate(LINES, avoid=[["a \ud800"], []])

    def test_constraints_with_sampling_or_alternatives_are_a_value_error(self):
        # was: rnnsearch.Error from the search
        for keywords in (dict(sampling_topk=5), dict(sampling_topk=0, sampling_topp=0.9), dict(alternatives=2)):
            with self.subTest(**keywords):
                with self.assertRaisesRegex(ValueError, "^sentences\\[0\\]: constraints need beam search: not with sampling"):
                    TRANSLATOR.translate(LINES, constraints=[["hund"], []], **keywords)
        sampled = TRANSLATOR.translate(LINES, avoid=[["hund"], []], sampling_topk=5)
        self.assertEqual(len(sampled), 2)

    def test_too_many_constraints_is_a_value_error(self):
        with self.assertRaisesRegex(ValueError, "^sentences\\[0\\]: 65 constraints; the limit is 64 per sentence$"):
            TRANSLATOR.translate(LINES, constraints=[["hund"] * 65, []])

    def test_align_reverse_says_what_it_wants(self):
        # was: pybind11's "Unable to cast Python instance of type <class 'str'> to C++ type ..."
        with self.assertRaisesRegex(TypeError, "^reverse must be a Translator of the reverse direction "
                                               r"\(target to source\), not str$"):
            TRANSLATOR.align(["a dog"], ["ein hund"], reverse="x")


if __name__ == "__main__":
    unittest.main()
