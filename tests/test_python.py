"""The Python module against the command line (docs/python.md).

Trains tiny models on corpora/tiny with the rnnsearch binary, then checks that the module gives
what the binary prints with the same options: translations byte for byte, n-best scores to
print precision, attention equal to the JSON soft alignment, hard alignments, score and align (with
reverse models, methods and symmetrization as `rnnsearch align`), hmm_align (`align --hmm`),
alignment_error_rate,
the heatmap SVG, the one-line error messages; and that bad inputs raise or warn as documented,
threads do not mix results up, and the GIL is released while C++ computes.

Run by ctest (python_api) under pytest (Debian's python3-pytest) with PYTHONPATH=build/python,
RNNSEARCH_BINARY and RNNSEARCH_SOURCE_DIR set; `python3 -m unittest test_python` runs it too.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request
import warnings
import xml.etree.ElementTree as ElementTree

import numpy as np

import rnnsearch
from rnnsearch_binary import TINY, run, start_server, train_tiny

WORK = None  # temporary directory of the module's models and files
MODELS = {}  # name -> model directory


def cli_error(*args):
    """The one-line error of a failing command, less its 'rnnsearch CMD: error: ' prefix."""
    _, err = run(*args, check=False)
    lines = [line for line in err.splitlines() if ": error: " in line]
    assert len(lines) == 1, err
    return lines[0].split(": error: ", 1)[1]


def out_lines(stdout):
    assert stdout.endswith(b"\n") or not stdout
    return stdout.decode("utf-8").split("\n")[:-1]


def train(name, *extra):
    MODELS[name] = train_tiny(os.path.join(WORK, name), *extra)


def write(name, data):
    path = os.path.join(WORK, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def read_lines(path):
    with open(path, "rb") as f:
        return f.read().split(b"\n")[:-1]


# The validation sources, then lines the command line treats specially: empty, white space
# only, invalid UTF-8, longer than --max-length (cut), unknown words, punctuation to detokenize.
EXTRA_LINES = [b"", b"   ", b"a \xff\xfe dog", b" ".join([b"the dog"] * 130), b"zzqx unknownword qqq",
               b"a man's t-shirt, (red) and 3.5 dogs."]


# Issue 42's Marian-style deep s2s model: deep transitions, stacked layers with residual
# connections, layer normalization.
DEEP_S2S = ["--enc-cell-depth", 2, "--enc-depth", 2, "--dec-cell-base-depth", 2, "--dec-depth", 2,
            "--dec-cell-high-depth", 2, "--skip", "--layer-normalization"]


def setUpModule():
    global WORK
    WORK = tempfile.mkdtemp(prefix="rnnsearch_python_")
    train("words")
    train("other", "--seed", 2)
    train("subwords", "--subwords", 200)
    train("deep", *DEEP_S2S)
    # an alignment output trained on links no attention follows: every target word to source word 0
    with open(os.path.join(TINY, "train.de"), "rb") as f:
        links = [" ".join("0-%d" % j for j in range(len(line.split()))) for line in f.read().split(b"\n")[:-1]]
    train("aligned", "--alignment-output", 8, "--guided-alignment", write("first.links", ("\n".join(links) + "\n").encode()))
    with open(os.path.join(TINY, "val.en"), "rb") as f:
        sources = f.read().split(b"\n")[:-1]
    write("input.txt", b"\n".join(sources + EXTRA_LINES) + b"\n")


def tearDownModule():
    shutil.rmtree(WORK, ignore_errors=True)


def input_path():
    return os.path.join(WORK, "input.txt")


def input_lines():
    return read_lines(input_path())


class AlignmentOutput(unittest.TestCase):
    """A model with an alignment output (--alignment-output): Python and the server show it where the
    command line does (translate, score), and the attention with raw_attention=1 as with --raw-attention."""

    def test_every_shell_shows_the_alignment_output(self):
        model = MODELS["aligned"]
        with open(os.path.join(TINY, "val.en"), encoding="utf-8") as f:
            lines = f.read().splitlines()[:20]
        source = write("aligned-src.txt", ("\n".join(lines) + "\n").encode())
        translator = rnnsearch.Translator(model)
        server, url = start_server(model, os.path.join(WORK, "serve-aligned.log"))
        self.addCleanup(server.wait)
        self.addCleanup(server.terminate)

        def post(path, body):
            request = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=60) as response:
                return json.load(response)

        with urllib.request.urlopen(url + "info", timeout=60) as response:
            self.assertIs(json.load(response)["alignment_output"], True)
        shown = {}
        for raw in (0, 1):
            extra = ["--raw-attention"] if raw else []
            stdout, _ = run("translate", "-m", model, "-i", source, "--format", "json", "--alignment", "soft", *extra)
            records = [json.loads(line) for line in out_lines(stdout)]
            results = translator.translate(lines, return_attention=True, raw_attention=raw)
            served = post("translate", {"q": lines, "alignment": "soft", "raw_attention": raw})["translations"]
            # (to the JSON's 4 significant digits: the output is computed in batches of other
            # compositions in Python and the server, and its last bits depend on them)
            for record, result, entry in zip(records, results, served, strict=True):
                np.testing.assert_allclose(result.attention.matrix, record["alignment"], rtol=1e-3, atol=1e-7)
                np.testing.assert_allclose(entry["hypotheses"][0]["alignment"], record["alignment"], rtol=1e-3, atol=1e-7)
            shown[raw] = [r["alignment"] for r in records]
            stdout, _ = run("score", "-m", model, "--src", source, "--tgt", source, "--format", "json",
                            "--alignment", "soft", *extra)
            scored = translator.score(lines, lines, return_attention=True, raw_attention=raw)
            served = post("score", {"src": lines, "tgt": lines, "alignment": "soft", "raw_attention": raw})["scores"]
            for record, result, entry in zip([json.loads(line) for line in out_lines(stdout)], scored, served,
                                             strict=True):
                np.testing.assert_allclose(result.attention.matrix, record["alignment"], rtol=1e-3, atol=1e-7)
                np.testing.assert_allclose(entry["alignment"], record["alignment"], rtol=1e-3, atol=1e-7)
        self.assertNotEqual(shown[0], shown[1])
        # the output follows its links (source word 0) more than the attention does
        def on_first(matrices):
            rows = [row for matrix in matrices for row in matrix[:-1]]
            return sum(row.index(max(row[:-1])) == 0 for row in rows) / len(rows)
        self.assertGreater(on_first(shown[0]), on_first(shown[1]) + 0.2)


class TranslateMatchesCli(unittest.TestCase):
    """Translator.translate against `rnnsearch translate` with the same options."""

    @classmethod
    def setUpClass(cls):
        cls.translators = {}

    def translator(self, *names, threads=1, precision="auto"):
        key = (names, threads, precision)
        if key not in self.translators:
            dirs = [MODELS[n] for n in names]
            self.translators[key] = rnnsearch.Translator(dirs[0] if len(dirs) == 1 else dirs, threads=threads,
                                                         precision=precision)
        return self.translators[key]

    @staticmethod
    def model_args(*names):
        return [a for n in names for a in ("-m", MODELS[n])]

    def check_text(self, names, cli_args, threads=1, **kwargs):
        stdout, _ = run("translate", *self.model_args(*names), "-i", input_path(), "--threads", threads, *cli_args)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rnnsearch.InputWarning)
            results = self.translator(*names, threads=threads).translate(input_lines(), **kwargs)
        self.assertEqual(len(results), len(input_lines()))
        self.assertEqual([r.text.encode("utf-8") for r in results], stdout.split(b"\n")[:-1])
        return results

    def test_one_best_text(self):
        results = self.check_text(["words"], [])
        self.assertGreater(len({r.text for r in results}), 3)  # the model says different things
        self.assertTrue(all(r.text == " ".join(r.tokens) for r in results))

    def test_detokenized_text(self):
        self.check_text(["words"], ["--detokenize"], detokenize=True)

    def test_options_and_two_threads(self):
        self.check_text(["words"], ["--beam-size", 3, "--normalize", 0.3, "--batch-size", 7, "--maxi-batch", 2],
                        threads=2, beam_size=3, normalize=0.3, batch_size=7, maxi_batch=2)

    def test_decoding_controls(self):
        for name in ["words", "deep"]:
            with self.subTest(model=name):
                self.check_text([name], ["--beam-size", 4, "--max-length-factor", 0.8, "--word-penalty", 0.3,
                                         "--length-penalty-alpha", 0.6, "--coverage-penalty", 0.2],
                                beam_size=4, max_length_factor=0.8, word_penalty=0.3, length_penalty_alpha=0.6,
                                coverage_penalty=0.2)

    def test_sampling(self):
        """Sampling gives the CLI's samples, the same at 1 and 2 threads and any batch size for one seed."""
        args = ["--sampling-topk", 4, "--sampling-temperature", 1.5, "--sampling-seed", 9]
        kwargs = dict(sampling_topk=4, sampling_temperature=1.5, sampling_seed=9)
        one = self.check_text(["words"], args + ["--batch-size", 3], batch_size=3, **kwargs)
        two = self.check_text(["words"], args, threads=2, **kwargs)
        self.assertEqual([r.text for r in one], [r.text for r in two])
        self.assertNotEqual([r.text for r in one], [r.text for r in self.check_text(["words"], [])])
        samples = self.translator("words").translate(input_lines()[:3], sampling_topk=0, n_best=4)
        self.assertTrue(all(len(r.hypotheses) == 4 for r in samples if r.hypotheses))

    def test_sampling_values_are_ctranslate2s(self):
        """sampling_topk=1 (the default) is the beam search's output; 0 samples the whole distribution,
        as the CLI's --sampling-topk 0 does; sampling_topp=1 filters nothing; sampling_topp alone is the
        old spelling of sampling, refused with the CLI's words."""
        beam = self.check_text(["words"], ["--sampling-topk", 1], sampling_topk=1)
        self.assertEqual([r.text for r in beam], [r.text for r in self.check_text(["words"], [])])
        lines = input_lines()[:4]
        n_best = self.translator("words").translate(lines, beam_size=4, n_best=3)
        self.assertEqual([[h.tokens for h in r.hypotheses] for r in n_best],
                         [[h.tokens for h in r.hypotheses]
                          for r in self.translator("words").translate(lines, beam_size=4, n_best=3, sampling_topk=1)])
        whole = self.check_text(["words"], ["--sampling-topk", 0, "--sampling-seed", 5], sampling_topk=0, sampling_seed=5)
        self.assertNotEqual([r.text for r in whole], [r.text for r in beam])
        self.assertEqual([r.text for r in whole],
                         [r.text for r in self.check_text(["words"], ["--sampling-topk", 0, "--sampling-seed", 5],
                                                          sampling_topk=0, sampling_topp=1.0, sampling_seed=5)])
        for old in (dict(sampling_topp=1.0), dict(sampling_topp=0.9, sampling_seed=3)):
            with self.subTest(**old):
                with self.assertRaisesRegex(rnnsearch.Error, r"^--sampling-topp goes with sampling: --sampling-topk 0 "
                                                             r"\(the whole distribution\) or K > 1 \(--sampling-topp "
                                                             r"alone no longer samples\)$"):
                    self.translator("words").translate(lines, **old)

    def test_deep_model(self):
        with open(os.path.join(MODELS["deep"], "config.json"), encoding="utf-8") as f:
            config = json.load(f)["model"]
        self.assertEqual((config["enc_depth"], config["dec_depth"], config["layer_normalization"]), (2, 2, True))
        results = self.check_text(["deep"], [])
        self.assertNotEqual([r.text for r in results], [r.text for r in self.check_text(["words"], [])])
        self.check_attention(["deep"])

    def test_target_prefix(self):
        # the references' first words without punctuation (none for every third line), as
        # --target-prefix FILE has them
        with open(os.path.join(TINY, "val.de"), encoding="utf-8") as f:
            references = f.read().split("\n")[:-1]
        prefixes = [" ".join([w for w in r.split() if w.isalpha()][:1 + k % 2]).encode() if k % 3 else b""
                    for k, r in enumerate(references)]
        prefixes += [b"ein"] * (len(input_lines()) - len(prefixes))
        prefix_path = write("prefixes.txt", b"\n".join(prefixes) + b"\n")
        for name in ["words", "subwords"]:
            with self.subTest(model=name):
                results = self.check_text([name], ["--n-best", 0, "--target-prefix", prefix_path],
                                          target_prefix=[p.decode("utf-8") for p in prefixes])
                forced = 0
                for r, prefix in zip(results, prefixes):
                    if r.hypotheses and prefix:
                        # both models lowercase; the word model has <unk> for the words it does not know
                        words = prefix.decode("utf-8").lower().split()
                        tokens = r.hypotheses[0].tokens[:len(words)]
                        self.assertEqual(len(tokens), len(words))
                        self.assertTrue(all(t == w or t == "<unk>" for t, w in zip(tokens, words)), (tokens, words))
                        forced += tokens == words
                self.assertGreater(forced, 10)
        with self.assertRaises(rnnsearch.Error):
            self.translator("words").translate(["a dog", "a cat"], target_prefix=["ein"])

    def test_alternatives(self):
        """alternatives=K gives the CLI's --alternatives: K hypotheses per line, each with the word where it
        parts from the others after the prefix, and that word's probability, best first."""
        lines = input_lines()[:6]
        prefixes = ["ein", "", "ein mann", "", "zwei", "eine"]
        prefix_path = write("alternative-prefixes.txt", "\n".join(prefixes).encode() + b"\n")
        lines_path = write("alternative-lines.txt", b"\n".join(lines) + b"\n")
        for name in ["words", "subwords"]:
            with self.subTest(model=name):
                stdout, _ = run("translate", *self.model_args(name), "-i", lines_path, "--target-prefix", prefix_path,
                                "--alternatives", 3, "--format", "json")
                records = [json.loads(line) for line in stdout.decode("utf-8").split("\n")[:-1]]
                results = self.translator(name).translate(lines, alternatives=3, target_prefix=prefixes)
                hypotheses = [h for r in results for h in r.hypotheses]
                self.assertEqual(len(hypotheses), len(records))
                for h, record in zip(hypotheses, records):
                    self.assertEqual(h.tokens, record["target"])
                    self.assertEqual(h.alternative.position, record["alternative"]["position"])
                    self.assertEqual(h.alternative.word, record["alternative"]["word"])
                    self.assertAlmostEqual(h.alternative.probability, record["alternative"]["probability"], places=6)
                for r, prefix in zip(results, prefixes):
                    self.assertEqual(len(r.hypotheses), 3)
                    self.assertTrue(all(h.alternative.position == len(prefix.split()) for h in r.hypotheses))
                    probabilities = [h.alternative.probability for h in r.hypotheses]
                    self.assertEqual(probabilities, sorted(probabilities, reverse=True))
                    self.assertEqual(len({h.alternative.word for h in r.hypotheses}), 3)
        self.assertIsNone(self.translator("words").translate(lines[:1])[0].hypotheses[0].alternative)

    def test_constraints_and_avoid(self):
        """constraints= and avoid= (a list of phrases per sentence) give the CLI's --constraints and --avoid:
        each translation holds its phrases (as whole words) and none to avoid."""
        lines = input_lines()[:8]
        constraints = [["hund"], [], ["ein mann", "rot"], ["frau"], [], ["zwei"], ["strand"], ["mädchen"]]
        avoid = [[], ["ein"], ["eine"], [], ["mann", "zwei"], [], ["ein"], []]
        paths = [write(name + ".txt", b"".join(json.dumps(p, ensure_ascii=False).encode() + b"\n" for p in phrases))
                 for name, phrases in (("constraints", constraints), ("avoid", avoid))]
        lines_path = write("constrained-lines.txt", b"\n".join(lines) + b"\n")
        for name in ["words", "subwords"]:
            with self.subTest(model=name):
                stdout, _ = run("translate", *self.model_args(name), "-i", lines_path, "--constraints", paths[0],
                                "--avoid", paths[1])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", rnnsearch.InputWarning)
                    results = self.translator(name).translate(lines, constraints=constraints, avoid=avoid)
                self.assertEqual([r.text.encode("utf-8") for r in results], stdout.split(b"\n")[:-1])
                for r, include, exclude in zip(results, constraints, avoid):
                    text = " " + " ".join(r.tokens) + " "
                    for phrase in include:
                        self.assertIn(" " + phrase + " ", text)
                    for phrase in exclude:
                        self.assertNotIn(" " + phrase + " ", text)
        with self.assertRaises(rnnsearch.Error):
            self.translator("words").translate(["a dog", "a cat"], constraints=[["hund"]])

    def test_replace_unk(self):
        results = self.check_text(["words"], ["--replace-unk"], replace_unk=True)
        self.assertFalse(any("<unk>" in r.tokens for r in results))

    def test_ensemble_text(self):
        self.check_text(["words", "other"], [])

    def test_subword_text(self):
        results = self.check_text(["subwords"], [])
        self.assertFalse(any("\u2581" in r.text for r in results))

    def test_fp32(self):
        stdout, _ = run("translate", "-m", MODELS["words"], "-i", input_path(), "--precision", "fp32")
        translator = self.translator("words", precision="fp32")
        self.assertEqual(translator.precision, "fp32")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rnnsearch.InputWarning)
            results = translator.translate(input_lines())
        self.assertEqual([r.text.encode() for r in results], stdout.split(b"\n")[:-1])

    def check_n_best(self, names):
        stdout, _ = run("translate", *self.model_args(*names), "-i", input_path(), "--beam-size", 4, "--n-best", 3,
                        "--normalize", 0.5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rnnsearch.InputWarning)
            results = self.translator(*names).translate(input_lines(), beam_size=4, n_best=3, normalize=0.5)
        lines = []
        for r in results:
            # an untranslated line stands as one empty hypothesis of score 0 in an n-best list
            for text, score in [(h.text, h.score) for h in r.hypotheses] or [("", 0.0)]:
                lines.append("%d ||| %s ||| %g" % (r.line, text, score))
        self.assertEqual(lines, out_lines(stdout))
        self.assertTrue(any(len(r.hypotheses) == 3 for r in results))
        for r in results:
            self.assertEqual([h.score for h in r.hypotheses], sorted((h.score for h in r.hypotheses), reverse=True))

    def test_n_best(self):
        self.check_n_best(["words"])

    def test_n_best_ensemble(self):
        self.check_n_best(["words", "other"])

    def test_n_best_subwords(self):
        self.check_n_best(["subwords"])

    def check_attention(self, names, units="words"):
        # --threads 1 as the Translator's: these models' hidden size, 12, is not a multiple of 16, where
        # a row's place in memory may change the last bit (docs/translating.md), and 4 digits show it
        stdout, _ = run("translate", *self.model_args(*names), "-i", input_path(), "--format", "json",
                        "--alignment-units", units, "--threads", 1)
        records = [json.loads(line) for line in out_lines(stdout)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rnnsearch.InputWarning)
            results = self.translator(*names).translate(input_lines(), return_attention=True, alignment_units=units)
        self.assertEqual(len(records), len(results))
        checked = 0
        for record, result in zip(records, results):
            if not result.hypotheses:
                self.assertNotIn("alignment", record)
                self.assertIsNone(result.attention)
                continue
            attention = result.attention
            matrix = attention.matrix
            self.assertEqual(matrix.dtype, np.float32)
            self.assertEqual(attention.source, record["source"] + ["</s>"])
            self.assertEqual(attention.target, record["target"] + ["</s>"])
            self.assertEqual(matrix.shape, (len(record["target"]) + 1, len(record["source"]) + 1))
            self.assertEqual(attention.shape, matrix.shape)
            np.testing.assert_allclose(matrix.sum(axis=1), 1.0, atol=1e-5)
            # the JSON prints each weight with 4 significant digits
            self.assertEqual([[float("%.4g" % w) for w in row] for row in matrix.tolist()], record["alignment"])
            self.assertEqual("%g" % result.score, "%g" % record["score"])
            self.assertIs(np.asarray(attention).dtype, np.dtype(np.float32))
            with self.assertRaises(ValueError):
                matrix[0, 0] = 2  # read-only
            checked += 1
        self.assertGreater(checked, 40)
        return results

    def test_attention_equals_json(self):
        self.check_attention(["words"])

    def test_attention_ensemble(self):
        self.check_attention(["words", "other"])

    def test_attention_subwords(self):
        results = self.check_attention(["subwords"])
        self.assertTrue(all(r.attention.target[:-1] == r.tokens for r in results if r.hypotheses))

    def test_attention_subword_pieces(self):
        results = self.check_attention(["subwords"], units="pieces")
        self.assertTrue(any("\u2581" in "".join(r.attention.source) for r in results if r.hypotheses))

    def test_hard_alignment(self):
        stdout, _ = run("translate", "-m", MODELS["words"], "-i", input_path(), "--alignment", "hard")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rnnsearch.InputWarning)
            results = self.translator("words").translate(input_lines(), return_attention=True)
        lines = []
        for r in results:
            if not r.hypotheses:
                lines.append("")
                continue
            self.assertEqual(len(r.alignment), len(r.tokens))
            lines.append(r.text + " ||| " + " ".join("%d-%d" % pair for pair in r.alignment))
        self.assertEqual(lines, out_lines(stdout))

    def test_translations_do_not_depend_on_attention(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rnnsearch.InputWarning)
            plain = self.translator("words").translate(input_lines())
            attended = self.translator("words").translate(input_lines(), return_attention=True)
        self.assertEqual([r.text for r in plain], [r.text for r in attended])
        self.assertTrue(all(r.attention is None and r.alignment is None for r in plain))


class ScoreMatchesCli(unittest.TestCase):
    """score and align against `rnnsearch score`."""

    @classmethod
    def setUpClass(cls):
        with open(os.path.join(TINY, "val.en"), "rb") as f:
            sources = f.read().split(b"\n")[:-1]
        with open(os.path.join(TINY, "val.de"), "rb") as f:
            targets = f.read().split(b"\n")[:-1]
        # an empty target, invalid UTF-8 and a pair too long are not scored
        cls.sources = sources + [b"a dog", b"a \xff dog", b" ".join([b"dog"] * 300)]
        cls.targets = targets + [b"", b"ein hund", b"hund"]
        cls.src = write("score.src", b"\n".join(cls.sources) + b"\n")
        cls.tgt = write("score.tgt", b"\n".join(cls.targets) + b"\n")

    def scores(self, translator, **kwargs):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results = translator.score(self.sources, self.targets, **kwargs)
        self.assertEqual(len([w for w in caught if issubclass(w.category, rnnsearch.InputWarning)]), 3)
        return results

    def check_log_probs(self, names):
        models = [a for n in names for a in ("-m", MODELS[n])]
        stdout, _ = run("score", *models, "--src", self.src, "--tgt", self.tgt)
        dirs = [MODELS[n] for n in names]
        results = self.scores(rnnsearch.Translator(dirs, threads=1))
        self.assertEqual(len(results), len(self.sources))
        lines = out_lines(stdout)
        for line, result in zip(lines, results):
            if result.log_prob is None:
                self.assertEqual(line, "")
                self.assertTrue(result.warning)
            else:
                self.assertEqual(line.split()[0], "%g" % result.log_prob)
                self.assertLess(result.log_prob, 0)
        self.assertEqual(sum(r.log_prob is None for r in results), 3)

    def test_score(self):
        self.check_log_probs(["words"])

    def test_score_ensemble(self):
        self.check_log_probs(["words", "other"])

    def test_score_subwords(self):
        self.check_log_probs(["subwords"])

    def test_score_deep(self):
        self.check_log_probs(["deep"])

    def test_score_ranking(self):
        """The ranking keywords give score's third number; without them score is log_prob."""
        stdout, _ = run("score", "-m", MODELS["words"], "--src", self.src, "--tgt", self.tgt, "--word-penalty", 0.3,
                        "--length-penalty-alpha", 0.6, "--coverage-penalty", 0.5)
        translator = rnnsearch.Translator(MODELS["words"], threads=1)
        ranked = self.scores(translator, word_penalty=0.3, length_penalty_alpha=0.6, coverage_penalty=0.5)
        plain = self.scores(translator)
        for line, result, unranked in zip(out_lines(stdout), ranked, plain):
            if result.log_prob is None:
                self.assertIsNone(result.score)
                continue
            self.assertEqual(line.split()[2], "%g" % result.score)
            self.assertNotEqual(result.score, result.log_prob)
            self.assertEqual(unranked.score, unranked.log_prob)
        with self.assertRaisesRegex(rnnsearch.Error, "both rank by length"):
            translator.score(["a dog"], ["ein hund"], normalize=1.0, length_penalty_alpha=0.6)

    def test_score_attention_equals_json(self):
        stdout, _ = run("score", "-m", MODELS["words"], "--src", self.src, "--tgt", self.tgt, "--format", "json")
        records = [json.loads(line) for line in out_lines(stdout)]
        results = self.scores(rnnsearch.Translator(MODELS["words"], threads=1), return_attention=True)
        for record, result in zip(records, results):
            if result.log_prob is None:
                self.assertIsNone(record["score"])
                self.assertIsNone(result.attention)
                continue
            self.assertEqual(result.attention.source, record["source"] + ["</s>"])
            self.assertEqual(result.attention.target, record["target"] + ["</s>"])
            self.assertEqual([[float("%.4g" % w) for w in row] for row in result.attention.matrix.tolist()],
                             record["alignment"])
            np.testing.assert_allclose(result.attention.matrix.sum(axis=1), 1.0, atol=1e-5)

    def test_align_equals_score_hard(self):
        for name in ("words", "subwords"):
            stdout, _ = run("score", "-m", MODELS[name], "--src", self.src, "--tgt", self.tgt, "--alignment", "hard")
            translator = rnnsearch.Translator(MODELS[name], threads=1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", rnnsearch.InputWarning)
                alignments = translator.align(self.sources, self.targets)
                scores = translator.score(self.sources, self.targets, return_attention=True)
            expected = [line.split(" ||| ")[1] if " ||| " in line else "" for line in out_lines(stdout)]
            self.assertEqual([" ".join("%d-%d" % p for p in a) for a in alignments], expected)
            self.assertEqual([s.alignment or [] for s in scores], alignments)
            self.assertTrue(all(len(a) == len(s.target) for a, s in zip(alignments, scores) if a))

    def test_align_methods_and_aer_equal_cli_align(self):
        translator = rnnsearch.Translator(MODELS["words"], threads=1)
        # another en→de model serves as the reverse one: what is tested is that both sides run
        # the same library code with the same options
        reverse = rnnsearch.Translator(MODELS["other"], threads=1)
        lines = {}
        # (the tiny models attend mostly to </s>, which argmax never links: thresholds give links)
        for kwargs, args in [(dict(method="argmax"), []),
                             (dict(method="threshold:0.1"), ["--method", "threshold:0.1"]),
                             (dict(symmetrize="union"), ["--symmetrize", "union"]),  # one model's rows and columns
                             (dict(reverse=reverse, symmetrize="union", method="threshold:0.1"),
                              ["--symmetrize", "union", "--method", "threshold:0.1"]),
                             (dict(reverse=reverse, method="threshold:0.1"), ["--method", "threshold:0.1"]),
                             (dict(reverse=reverse, method="average-threshold:0.1"),
                              ["--method", "average-threshold:0.1"])]:
            with self.subTest(**{k: v for k, v in kwargs.items() if k != "reverse"}, reverse="reverse" in kwargs):
                models = ["-m", MODELS["words"]] + (["--reverse-model", MODELS["other"]] if "reverse" in kwargs else [])
                stdout, _ = run("align", *models, "--src", self.src, "--tgt", self.tgt, *args)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    alignments = translator.align(self.sources, self.targets, **kwargs)
                self.assertEqual(len([w for w in caught if issubclass(w.category, rnnsearch.InputWarning)]), 3)
                text = [" ".join("%d-%d" % p for p in a) for a in alignments]
                self.assertEqual(text, out_lines(stdout))
                if "threshold" in kwargs.get("method", ""):
                    self.assertTrue(any(text), "no links at all: the comparison would be empty")
                lines[tuple(args) + (("reverse",) if "reverse" in kwargs else ())] = text
        # AER of the symmetrized links against the argmax ones as 0-based gold, as align-eval
        gold = lines[("--method", "threshold:0.1")]
        links = lines[("--symmetrize", "union", "--method", "threshold:0.1", "reverse")]
        stdout, _ = run("align-eval", "--gold", write("py.gold", "\n".join(gold).encode() + b"\n"), "--gold-zero-based",
                        "--links", write("py.links", "\n".join(links).encode() + b"\n"))
        scores = rnnsearch.alignment_error_rate(gold, links, gold_zero_based=True)
        self.assertEqual(str(scores), out_lines(stdout)[0])
        self.assertEqual(scores.recall, 1.0)  # the union holds the forward links
        self.assertLess(scores.precision, 1.0)  # and the reverse model's
        self.assertEqual(rnnsearch.alignment_error_rate(gold, gold, gold_zero_based=True).aer, 0.0)
        with self.assertRaisesRegex(rnnsearch.Error, "^links:2: bad link 'x'"):
            rnnsearch.alignment_error_rate(["1-1", "1-1"], ["0-0", "x"])
        with self.assertRaisesRegex(rnnsearch.Error, "reads its cells: give one"):
            translator.align(["a"], ["b"], symmetrize="union", method="threshold:0.1")
        with self.assertRaisesRegex(rnnsearch.Error, "--method must be argmax"):
            translator.align(["a"], ["b"], method="maximum")

    def test_hmm_align_equals_cli_align_hmm(self):
        for kwargs, args in [({}, []),
                             (dict(stem=0, symmetrize="intersect", threads=2), ["--stem", 0, "--symmetrize", "intersect"]),
                             (dict(agreement=False, prior=0.0, method="threshold:0.2", symmetrize="union"),
                              ["--no-agreement", "--prior", 0, "--method", "threshold:0.2", "--symmetrize", "union"])]:
            with self.subTest(**kwargs):
                stdout, _ = run("align", "--hmm", "--src", self.src, "--tgt", self.tgt, *args)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    alignments = rnnsearch.hmm_align(self.sources, self.targets, **kwargs)
                self.assertTrue(any(issubclass(w.category, rnnsearch.InputWarning) for w in caught))
                text = [" ".join("%d-%d" % p for p in a) for a in alignments]
                self.assertEqual(text, out_lines(stdout))
                self.assertTrue(any(text), "no links at all: the comparison would be empty")
        # the ranges are the library's: the same one-line error as the command line
        for keyword, value in [("stem", -1), ("null_probability", 1.0), ("prior", -0.5), ("hmm_iterations", -2)]:
            with self.subTest(keyword=keyword):
                expected = cli_error("align", "--hmm", "--src", self.src, "--tgt", self.tgt,
                                     "--" + keyword.replace("_", "-"), value)
                with self.assertRaises(rnnsearch.Error) as raised:
                    rnnsearch.hmm_align(["a"], ["b"], **{keyword: value})
                self.assertEqual(str(raised.exception), expected)

    def test_hmm_align_saves_and_reuses_tables_as_the_cli(self):
        # save_tables= writes what --save-hmm writes; tables= aligns as --hmm-tables, without training
        with tempfile.TemporaryDirectory() as tmp:
            saved = os.path.join(tmp, "python")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                trained = rnnsearch.hmm_align(self.sources, self.targets, save_tables=saved)
                reused = rnnsearch.hmm_align(self.sources, self.targets, tables=saved)
            self.assertEqual(reused, trained)
            self.assertTrue(any(trained), "no links at all: the comparison would be empty")
            stdout, _ = run("align", "--hmm-tables", saved, "--src", self.src, "--tgt", self.tgt)
            self.assertEqual([" ".join("%d-%d" % p for p in a) for a in reused], out_lines(stdout))
            with open(os.path.join(saved, "source.words"), "rb") as words:
                cli = os.path.join(tmp, "cli")
                run("align", "--hmm", "--src", self.src, "--tgt", self.tgt, "--save-hmm", cli)
                with open(os.path.join(cli, "source.words"), "rb") as cli_words:
                    self.assertEqual(words.read(), cli_words.read())
            with self.assertRaisesRegex(rnnsearch.Error, "give one"):
                rnnsearch.hmm_align(["a"], ["b"], tables=saved, save_tables=saved)
            with self.assertRaisesRegex(rnnsearch.Error, "hmm.npz"):
                rnnsearch.hmm_align(["a"], ["b"], tables=os.path.join(tmp, "none"))

    def test_hmm_align_without_usable_pairs_and_too_long(self):
        # no usable pair used to abort the interpreter (issue 81): a child runs the calls first, so
        # that an abort fails this test rather than ending the suite
        code = "\n".join(["import warnings, rnnsearch",
                          "warnings.simplefilter('ignore')",
                          "for sources in ([], [''], ['', ' '], [b'\\xff', b'a \\xfe']):",
                          "    for prior in (0.1, 0.0):",
                          "        print(rnnsearch.hmm_align(sources, sources, prior=prior))"])
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout.splitlines(), ["[]"] * 2 + ["[[]]"] * 2 + ["[[], []]"] * 4)
        with self.assertWarnsRegex(rnnsearch.InputWarning, r"^pairs\[0\]: empty source; not scored"):
            self.assertEqual(rnnsearch.hmm_align([""], [""]), [[]])
        # a side longer than max_length (default 200, as --max-length) is skipped with a warning
        long = " ".join(["Haus"] * 300)
        with self.assertWarnsRegex(rnnsearch.InputWarning, r"^pairs\[1\]: longer than 200 tokens \(--max-length\)"):
            links = rnnsearch.hmm_align(["das Haus", long, "das Buch"], ["the house", "the house", "the book"])
        self.assertEqual(links[1], [])
        with self.assertWarnsRegex(rnnsearch.InputWarning, r"^pairs\[0\]: longer than 1 tokens"):
            self.assertEqual(rnnsearch.hmm_align(["das Haus"], ["the house"], max_length=1), [[]])
        with self.assertRaisesRegex(rnnsearch.Error, "--max-length must be at least 1"):
            rnnsearch.hmm_align(["a"], ["b"], max_length=0)

    def test_lengths_must_match(self):
        translator = rnnsearch.Translator(MODELS["words"], threads=1)
        with self.assertRaisesRegex(rnnsearch.Error, "sources and targets differ in length: 2 and 1 sentences"):
            translator.score(["a", "b"], ["c"])


class Heatmaps(unittest.TestCase):
    """The attention object's SVG is the file --heatmaps writes."""

    def test_translation_heatmap(self):
        heatmaps = os.path.join(WORK, "heatmaps")
        run("translate", "-m", MODELS["words"], "-i", input_path(), "--heatmaps", heatmaps, "--heatmaps-limit", 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rnnsearch.InputWarning)
            results = rnnsearch.Translator(MODELS["words"], threads=1).translate(input_lines(), return_attention=True)
        for k, result in enumerate(results[:3]):
            with open(os.path.join(heatmaps, "%05d.svg" % (k + 1)), encoding="utf-8") as f:
                expected = f.read()
            self.assertEqual(result.attention.to_svg(), expected)
            self.assertEqual(result.attention._repr_svg_(), expected)
            saved = os.path.join(WORK, "saved.svg")
            result.attention.save(saved)
            with open(saved, encoding="utf-8") as f:
                self.assertEqual(f.read(), expected)
            # what Jupyter renders: well-formed SVG with one cell per weight
            root = ElementTree.fromstring(result.attention._repr_svg_().encode("utf-8"))
            self.assertEqual(root.tag, "{http://www.w3.org/2000/svg}svg")
            cells = [e for e in root.iter("{http://www.w3.org/2000/svg}rect") if e.get("class") == "cell"]
            self.assertEqual(len(cells), result.attention.matrix.size)

    def test_score_heatmap(self):
        heatmaps = os.path.join(WORK, "score_heatmaps")
        src = write("one.src", b"a man in a red shirt .\n")
        tgt = write("one.tgt", b"ein mann in einem roten hemd .\n")
        run("score", "-m", MODELS["words"], "--src", src, "--tgt", tgt, "--heatmaps", heatmaps)
        score = rnnsearch.Translator(MODELS["words"], threads=1).score(
            ["a man in a red shirt ."], ["ein mann in einem roten hemd ."], return_attention=True)[0]
        with open(os.path.join(heatmaps, "00001.svg"), encoding="utf-8") as f:
            self.assertEqual(score.attention.to_svg(), f.read())


class BadInputs(unittest.TestCase):
    """Each bad input is an exception or the command line's documented behaviour."""

    @classmethod
    def setUpClass(cls):
        cls.translator = rnnsearch.Translator(MODELS["words"], threads=1)

    def test_empty_list(self):
        self.assertEqual(self.translator.translate([]), [])
        self.assertEqual(self.translator.score([], []), [])
        self.assertEqual(self.translator.align([], []), [])

    def test_empty_string(self):
        result, = self.translator.translate([""], return_attention=True)
        self.assertEqual((result.text, result.hypotheses, result.warning), ("", [], ""))
        self.assertIsNone(result.score)
        self.assertIsNone(result.attention)

    def check_invalid(self, line):
        with self.assertWarnsRegex(rnnsearch.InputWarning, r"sentences\[1\]: invalid UTF-8; its output line is empty"):
            results = self.translator.translate(["a dog", line, "a cat"])
        self.assertEqual(results[1].text, "")
        self.assertEqual(results[1].hypotheses, [])
        self.assertEqual(results[1].warning, "invalid UTF-8; its output line is empty")
        self.assertTrue(results[0].hypotheses and results[2].hypotheses)  # its neighbours are translated

    def test_invalid_utf8_bytes(self):
        self.check_invalid(b"a \xff\xfe dog")
        self.check_invalid(b"\xed\xa0\x80")  # an encoded surrogate
        self.check_invalid(b"\xc0\xaf")  # overlong

    def test_lone_surrogate(self):
        self.check_invalid("a \ud800 dog")
        with self.assertWarns(rnnsearch.InputWarning):
            score, = self.translator.score(["a \udcff dog"], ["ein hund"])
        self.assertIsNone(score.log_prob)
        self.assertIn("invalid UTF-8", score.warning)

    def test_not_strings(self):
        for bad in (None, 5, [None], ["a", 3], "a single string", b"bytes"):
            with self.assertRaises(TypeError):
                self.translator.translate(bad)
        with self.assertRaises(TypeError):
            self.translator.score(["a"], [None])

    def test_very_long_line(self):
        line = " ".join(["dog"] * 100000)
        with self.assertWarnsRegex(rnnsearch.InputWarning, r"100000 tokens, cut to the first 200 \(--max-length\)"):
            result, = self.translator.translate([line], return_attention=True)
        self.assertEqual(len(result.source), 200)
        self.assertEqual(result.attention.matrix.shape[1], 201)
        stdout, _ = run("translate", "-m", MODELS["words"], "-i", write("long.txt", line.encode() + b"\n"))
        self.assertEqual(stdout.decode(), result.text + "\n")

    def test_missing_model(self):
        missing = os.path.join(WORK, "no_such_model")
        with self.assertRaises(rnnsearch.Error) as caught:
            rnnsearch.Translator(missing)
        self.assertEqual(str(caught.exception), cli_error("translate", "-m", missing, "-i", input_path()))
        with self.assertRaises(rnnsearch.Error):
            rnnsearch.Translator([MODELS["words"], missing])
        with self.assertRaises(rnnsearch.Error):
            rnnsearch.Translator([])

    def test_corrupt_model(self):
        corrupt = os.path.join(WORK, "corrupt")
        shutil.copytree(MODELS["words"], corrupt, dirs_exist_ok=True)
        for name in ("model.best.npz", "model.npz"):
            path = os.path.join(corrupt, name)
            if os.path.exists(path):
                with open(path, "r+b") as f:
                    f.truncate(os.path.getsize(path) // 2)
        with self.assertRaises(rnnsearch.Error) as caught:
            rnnsearch.Translator(corrupt)
        self.assertEqual(str(caught.exception), cli_error("translate", "-m", corrupt, "-i", input_path()))
        with open(os.path.join(corrupt, "config.json"), "w") as f:
            f.write("{not json")
        with self.assertRaises(rnnsearch.Error) as caught:
            rnnsearch.Translator(corrupt)
        self.assertEqual(str(caught.exception), cli_error("translate", "-m", corrupt, "-i", input_path()))

    def test_option_errors_are_the_same_in_every_shell(self):
        """A bad option gets the command line's one-line error from Python, and a decoding option (the
        table every shell reads, decode/decode_options.h) the same from the server."""
        model = MODELS["words"]
        server, url = start_server(model, os.path.join(WORK, "serve-errors.log"))
        self.addCleanup(server.wait)
        self.addCleanup(server.terminate)

        def server_error(path, body):
            request = urllib.request.Request(url + path, json.dumps(body, allow_nan=False).encode(),
                                             {"Content-Type": "application/json"})
            with self.assertRaises(urllib.error.HTTPError) as caught:
                urllib.request.urlopen(request, timeout=60)
            self.assertEqual(caught.exception.code, 400)
            return json.load(caught.exception)["error"]

        cases = [  # Python keyword arguments, the same options on the command line
            (dict(beam_size=0), ["--beam-size", 0]),
            (dict(beam_size=2.5), ["--beam-size", 2.5]),
            (dict(n_best=6), ["--n-best", 6]),
            (dict(n_best=-1), ["--n-best", -1]),
            (dict(normalize=-1.0), ["--normalize", -1]),
            (dict(normalize=math.nan), ["--normalize", "nan"]),
            (dict(max_length_factor=-1.0), ["--max-length-factor", -1]),
            (dict(word_penalty=math.nan), ["--word-penalty", "nan"]),
            (dict(length_penalty_alpha=-1.0), ["--length-penalty-alpha", -1]),
            (dict(normalize=1.0, length_penalty_alpha=0.6), ["--normalize", 1.0, "--length-penalty-alpha", 0.6]),
            (dict(length_penalty_alpha=0.6, normalize=-1.0), ["--length-penalty-alpha", 0.6, "--normalize", -1]),
            (dict(coverage_penalty=-0.5), ["--coverage-penalty", -0.5]),
            (dict(batch_size=0), ["--batch-size", 0]),
            (dict(max_length=0), ["--max-length", 0]),
            (dict(maxi_batch=0), ["--maxi-batch", 0]),
            (dict(alignment_units="letters"), ["--alignment-units", "letters"]),
            (dict(alignment_units="pieces", replace_unk=True), ["--alignment-units", "pieces", "--replace-unk"]),
        ]
        decoding = {"beam_size", "n_best", "normalize", "max_length_factor", "word_penalty", "length_penalty_alpha",
                    "coverage_penalty"}
        for kwargs, args in cases:
            with self.subTest(**kwargs):
                with self.assertRaises(rnnsearch.Error) as caught:
                    self.translator.translate(["a dog"], **kwargs)
                expected = cli_error("translate", "-m", model, "-i", input_path(), *args)
                self.assertEqual(str(caught.exception), expected)
                if set(kwargs) <= decoding and not any(isinstance(v, float) and math.isnan(v) for v in kwargs.values()):
                    self.assertEqual(server_error("translate", dict(kwargs, q="a dog")), expected)
        for kwargs, args in [(dict(normalize=-1.0), ["--normalize", -1]),
                             (dict(normalize=0.0, length_penalty_alpha=0.6), ["--normalize", 0, "--length-penalty-alpha", 0.6])]:
            with self.subTest(score=kwargs):
                with self.assertRaises(rnnsearch.Error) as caught:
                    self.translator.score(["a"], ["b"], **kwargs)
                expected = cli_error("score", "-m", model, "--src", input_path(), "--tgt", input_path(), *args)
                self.assertEqual(str(caught.exception), expected)
                self.assertEqual(server_error("score", dict(kwargs, src="a", tgt="b")), expected)
        with self.assertRaises(TypeError):  # a keyword no shell knows, or not a number
            self.translator.translate(["a dog"], beam=5)
        with self.assertRaises(TypeError):
            self.translator.translate(["a dog"], beam_size="5")
        with self.assertRaises(TypeError):
            self.translator.score(["a"], ["b"], beam_size=5)  # score takes no beam
        for kwargs, args in [(dict(precision="fp16"), ["--precision", "fp16"]), (dict(threads=-1), ["--threads", -1]),
                             (dict(threads=100000), ["--threads", 100000])]:
            with self.subTest(**kwargs):
                with self.assertRaises(rnnsearch.Error) as caught:
                    rnnsearch.Translator(model, **kwargs)
                self.assertEqual(str(caught.exception), cli_error("translate", "-m", model, "-i", input_path(), *args))
        with self.assertRaises(rnnsearch.Error) as caught:
            self.translator.score(["a"], ["b"], batch_size=0)
        self.assertEqual(str(caught.exception), "--batch-size must be at least 1, not 0")
        # still usable after all that
        self.assertTrue(self.translator.translate(["a dog"])[0].hypotheses)


class Threads(unittest.TestCase):
    """Several Python threads at once give the results of one after the other."""

    @staticmethod
    def summary(results):
        return [(r.text, r.score, None if r.attention is None else r.attention.matrix.tobytes()) for r in results]

    def check_parallel(self, translators):
        with open(os.path.join(TINY, "val.en"), encoding="utf-8") as f:
            sentences = f.read().splitlines()
        jobs = [(sentences, dict(return_attention=True)), (sentences[::-1], dict(beam_size=3, n_best=2)),
                (sentences[:20], dict(return_attention=True, normalize=0.0)), (sentences, {})]
        expected = [self.summary(translators[0].translate(s, **kw)) for s, kw in jobs]
        got = [None] * len(jobs)
        errors = []

        def work(k):
            try:
                translator = translators[k % len(translators)]
                for _ in range(2):
                    got[k] = self.summary(translator.translate(jobs[k][0], **jobs[k][1]))
            except Exception as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(len(jobs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(got, expected)

    def test_one_translator_many_threads(self):
        self.check_parallel([rnnsearch.Translator(MODELS["words"], threads=1)])

    def test_two_translators_at_once(self):
        self.check_parallel([rnnsearch.Translator(MODELS["words"], threads=1),
                             rnnsearch.Translator(MODELS["words"], threads=1)])

    def test_gil_released_while_translating(self):
        translator = rnnsearch.Translator(MODELS["words"], threads=1)
        with open(os.path.join(TINY, "train.en"), encoding="utf-8") as f:
            sentences = f.read().splitlines()
        ticks = [0]
        stop = threading.Event()

        def count():
            while not stop.is_set():
                ticks[0] += 1

        counter = threading.Thread(target=count)
        counter.start()
        try:
            time.sleep(0.05)
            before = ticks[0]
            start = time.monotonic()
            translator.translate(sentences, beam_size=8)
            seconds = time.monotonic() - start
            during = ticks[0] - before
        finally:
            stop.set()
            counter.join()
        # Holding the GIL would let the counter run only at the 5 ms switch interval, if at all.
        self.assertGreater(seconds, 0.02)
        self.assertGreater(during, 1000 * seconds)


class Module(unittest.TestCase):
    def test_threads_default_to_one_per_core(self):
        """threads=0, the default of every command and of Translator: OMP_NUM_THREADS when set (ctest sets 1),
        else a thread per core this process may run on."""
        expected = int(os.environ.get("OMP_NUM_THREADS") or len(os.sched_getaffinity(0)))
        self.assertEqual(rnnsearch.Translator(MODELS["words"]).threads, expected)
        self.assertEqual(rnnsearch.Translator(MODELS["words"], threads=2).threads, 2)

    def test_repr_and_properties(self):
        translator = rnnsearch.Translator(MODELS["words"], threads=1, precision="fp32")
        self.assertEqual(translator.threads, 1)
        self.assertTrue(translator.models[0].endswith(".npz"))
        result, = translator.translate(["a dog ."], return_attention=True)
        self.assertIn("Translation(text=", repr(result))
        self.assertIn("<rnnsearch.Attention", repr(result.attention))
        self.assertIsInstance(result.hypotheses[0], rnnsearch.Hypothesis)
        self.assertTrue(result.hypotheses[0].finished or len(result.tokens) > 0)
        self.assertTrue(rnnsearch.__version__)
        self.assertTrue(issubclass(rnnsearch.Error, RuntimeError))


if __name__ == "__main__":
    unittest.main()
