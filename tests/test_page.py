"""The page of `rnnsearch serve` in a real browser: Debian's chromium, headless, driven by selenium.

Starts `rnnsearch serve --port 0` on a tiny model trained on corpora/tiny, types a sentence into
the page as a user would, and checks the page's DOM against what POST /translate returns for the
same sentence and options: the translation, the n-best list, one heatmap cell per attention
weight, the tooltip of a hovered cell, the source words a click on a target word marks; and that
the page requests nothing but the server's own URLs. Saves a screenshot of the page.

Run by ctest (serve_page) with Debian's python3, RNNSEARCH_BINARY and RNNSEARCH_SOURCE_DIR set.
RNNSEARCH_PAGE_SCREENSHOT: where the screenshot goes (default serve-page.png, in the current
directory); RNNSEARCH_PAGE_MODEL: serve this model instead of training a tiny one. The README's
picture is the screenshot of the quickstart's model:
  RNNSEARCH_PAGE_MODEL=models/en-de-small-raw RNNSEARCH_PAGE_SCREENSHOT=docs/images/serve-page.png \\
    /usr/bin/python3 tests/test_page.py
"""
import json
import os
import re
import shutil
import tempfile
import unittest
import urllib.request

from rnnsearch_binary import start_server, train_tiny

try:
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError as error:
    raise ImportError("the browser test needs Debian's python3-selenium (run it with /usr/bin/python3): "
                      "scripts/setup.sh installs it") from error

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SENTENCE = "A little girl in a pink dress is running on the beach."
# What the page sends for one line with its default settings (beam 5, n-best 5, normalize 1).
OPTIONS = {"beam_size": 5, "n_best": 5, "normalize": 1, "alignment": "soft", "heatmap": True}
WAIT_SECONDS = 180  # for a loaded 2-core CI machine: training, decoding and chromium share it
SOURCE_LABELS = "#heatmap g[text-anchor=start] > text"
TARGET_LABELS = "#heatmap g[text-anchor=end] > text"
CELLS = "#heatmap rect.cell"


def start_chromium():
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.path.exists(path):
            raise AssertionError("the browser test needs %s (Debian's %s): scripts/setup.sh installs it"
                                 % (path, package))
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    # --no-sandbox: CI runs as root, where chromium's sandbox refuses to start
    for argument in ("--headless", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=960,900",
                     "--force-device-scale-factor=1", "--lang=en-US"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})  # every request the page makes
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


class Page(unittest.TestCase):
    """The page after typing SENTENCE, against POST /translate of the same sentence and options."""

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix="rnnsearch_page_")
        cls.addClassCleanup(shutil.rmtree, cls.work, ignore_errors=True)
        cls.driver = start_chromium()
        cls.addClassCleanup(cls.driver.quit)
        cls.model = os.environ.get("RNNSEARCH_PAGE_MODEL") or train_tiny(os.path.join(cls.work, "tiny"))
        cls.server, cls.url = start_server(cls.model, os.path.join(cls.work, "serve.log"), WAIT_SECONDS)
        cls.addClassCleanup(cls.server.wait, 60)
        cls.addClassCleanup(cls.server.terminate)
        request = urllib.request.Request(cls.url + "translate", json.dumps(dict(OPTIONS, q=[SENTENCE])).encode(),
                                         {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=WAIT_SECONDS) as response:
            cls.expected = json.load(response)["translations"][0]
        cls.best = cls.expected["hypotheses"][0]
        cls.driver.get(cls.url)
        cls.driver.find_element(By.ID, "source").send_keys(SENTENCE)
        # Typing schedules a translation 300 ms after each key; the page is done when the heatmap
        # of the whole sentence is drawn (the labels of a prefix differ).
        try:
            WebDriverWait(cls.driver, WAIT_SECONDS).until(
                lambda _: cls.texts(SOURCE_LABELS) == cls.expected["source"] + ["</s>"])
        except TimeoutException:
            raise AssertionError("no heatmap of the sentence after %d s; status %r, translations %r" % (
                WAIT_SECONDS, cls.driver.find_element(By.ID, "status").text, cls.texts("#translations > li")))
        # The window as tall as the page, so that every element is in view and in the screenshot.
        cls.driver.set_window_size(960, cls.driver.execute_script(
            "return document.documentElement.scrollHeight + window.outerHeight - window.innerHeight"))

    @classmethod
    def texts(cls, css):
        """The textContent of each element that matches css."""
        return cls.driver.execute_script(
            "return Array.from(document.querySelectorAll(arguments[0]), e => e.textContent)", css)

    @classmethod
    def having_class(cls, css, name):
        """The indices, among the elements that match css, of those with class `name`."""
        return cls.driver.execute_script(
            "return Array.from(document.querySelectorAll(arguments[0]), (e, k) => e.classList.contains(arguments[1])"
            " ? k : -1).filter(k => k >= 0)", css, name)

    def listed(self, css):
        """(text, score) of each entry of a list of translations (#translations, #nbest)."""
        entries = self.driver.execute_script(
            "return Array.from(document.querySelectorAll(arguments[0]),"
            " li => [li.firstChild.textContent, li.querySelector('.score').textContent])", css)
        return [(text, float(score)) for text, score in entries]

    def assert_listed(self, css, expected):
        """The list shows these (text, score) pairs: texts exactly, scores as rounded to 4 decimals."""
        shown = self.listed(css)
        # the page shows an empty translation as "(empty)"
        self.assertEqual([text for text, _ in shown], [text or "(empty)" for text, _ in expected])
        for (_, score), (_, expected_score) in zip(shown, expected):
            self.assertAlmostEqual(score, expected_score, delta=5e-5)
        self.assertEqual(self.having_class(css, "selected"), [0])

    @classmethod
    def element(cls, css, index):
        """The index-th element that matches css."""
        return cls.driver.execute_script("return document.querySelectorAll(arguments[0])[arguments[1]]", css, index)

    def hover(self, row, col):
        """Moves the mouse onto a cell; returns the tooltip's text once it shows that cell's."""
        cell = self.element(CELLS, row * len(self.best["alignment"][0]) + col)
        ActionChains(self.driver, duration=0).move_to_element(cell).perform()
        tooltip = self.driver.find_element(By.ID, "tooltip")
        # chromium delivers mouse moves with the next frame, not always before perform() returns
        WebDriverWait(self.driver, WAIT_SECONDS, poll_frequency=0.05).until(
            lambda _: tooltip.is_displayed() and tooltip.text == cell.get_attribute("data-tip"),
            "the tooltip does not show the hovered cell's words and weight")
        return tooltip.text

    def click_target(self, row):
        self.element(TARGET_LABELS, row).click()

    def strongest(self, row):
        """The column of a row's largest weight."""
        weights = self.best["alignment"][row]
        return weights.index(max(weights))

    def test_translation_is_the_apis(self):
        """The sentence's translation and score are the API's, and no error is shown."""
        self.assert_listed("#translations > li", [(self.expected["translation"], self.expected["score"])])
        self.assertEqual(self.driver.find_element(By.ID, "status").text, "")

    def test_n_best_list_is_the_apis(self):
        """The n-best list is the API's hypotheses, best first and chosen."""
        hypotheses = self.expected["hypotheses"]
        self.assertGreater(len(hypotheses), 1)
        self.assert_listed("#nbest > li", [(h["translation"], h["score"]) for h in hypotheses])

    def test_heatmap_has_a_cell_per_weight(self):
        """The heatmap has rows x columns cells of the soft alignment, and a label per row."""
        alignment = self.best["alignment"]
        rows, cols = len(alignment), len(alignment[0])
        self.assertEqual((rows, cols), (len(self.best["target"]) + 1, len(self.expected["source"]) + 1))
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, CELLS)), rows * cols)
        self.assertEqual(len(self.texts(TARGET_LABELS)), rows)

    def test_hovering_a_cell_shows_its_words_and_weight(self):
        """The tooltip of the strongest cell of each row names its source word, target word and weight."""
        source, target = self.expected["source"] + ["</s>"], self.best["target"] + ["</s>"]
        for row in range(len(target)):
            col = self.strongest(row)
            match = re.fullmatch(r"(.*) \u2192 (.*): ([0-9.]+)", self.hover(row, col))
            self.assertIsNotNone(match)
            self.assertEqual(match.group(1, 2), (source[col], target[row]))
            # the tooltip has 4 decimals, the API 4 significant digits
            self.assertAlmostEqual(float(match.group(3)), self.best["alignment"][row][col], delta=1e-4)

    def test_clicking_a_target_word_marks_the_source_words_it_attends_to(self):
        """A click on each target word marks the source words with at least half its largest weight,
        the word itself and its row of cells, and nothing else."""
        for row, weights in enumerate(self.best["alignment"]):
            self.click_target(row)
            best = max(weights)
            self.assertEqual(self.having_class(SOURCE_LABELS, "highlight"),
                             [col for col, w in enumerate(weights) if w >= 0.5 * best])
            self.assertEqual(self.having_class(TARGET_LABELS, "highlight"), [row])
            self.assertEqual(self.having_class(CELLS, "focus"),
                             list(range(row * len(weights), (row + 1) * len(weights))))

    def test_no_request_leaves_the_server(self):
        """The page holds no URL (its heatmaps come later, from the API), and chromium's log holds no
        request but the server's."""
        with urllib.request.urlopen(self.url, timeout=WAIT_SECONDS) as response:
            self.assertNotRegex(response.read().decode("utf-8"), r"https?://")
        events = [json.loads(entry["message"])["message"] for entry in self.driver.get_log("performance")]
        requested = [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]
        self.assertIn(self.url + "translate", requested)
        self.assertEqual([url for url in requested if not url.startswith(self.url)], [])

    def test_typing_a_prefix_shows_its_completion_and_heatmap(self):
        """A target prefix typed for the chosen sentence: the translation, the n-best list and the
        heatmap's rows become the API's for that prefix; cleared, the page shows the plain translation
        again."""
        prefix = "Ein Hund"
        request = urllib.request.Request(
            self.url + "translate", json.dumps(dict(OPTIONS, q=[SENTENCE], target_prefix=[prefix])).encode(),
            {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=WAIT_SECONDS) as response:
            completed = json.load(response)["translations"][0]
        self.assertNotEqual(completed["translation"], self.expected["translation"])
        field = self.driver.find_element(By.ID, "prefix")
        field.send_keys(prefix)
        self.addCleanup(self.wait_for_translation, self.expected["translation"])
        self.addCleanup(lambda: self.driver.execute_script(
            "const f = document.getElementById('prefix'); f.value = ''; f.dispatchEvent(new Event('input'))"))
        self.assertEqual([w.lower() for w in completed["hypotheses"][0]["target"][:2]], ["ein", "hund"])
        self.wait_for_translation(completed["translation"])
        self.assert_listed("#nbest > li", [(h["translation"], h["score"]) for h in completed["hypotheses"]])
        best = completed["hypotheses"][0]
        self.assertEqual(self.texts(TARGET_LABELS), best["target"] + ["</s>"])
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, CELLS)),
                         len(best["alignment"]) * len(best["alignment"][0]))

    def test_clicking_a_word_lists_its_alternatives_and_choosing_one_translates_from_it(self):
        """A click on word 2 of the translation: the page lists the API's 5 alternatives after the first two
        words (word, completed translation, probability to 4 decimals); choosing one makes the prefix
        those words and its word, and the translation, n-best list and heatmap the API's for it."""
        position = min(2, len(self.best["target"]))
        prefix = " ".join(self.best["target"][:position])
        listed = self.api({"q": [SENTENCE], "target_prefix": [prefix], "alternatives": 5})["hypotheses"]
        self.assertEqual(len(listed), 5)
        self.assertTrue(all(h["alternative"]["position"] == position for h in listed))
        chosen = next(h for h in listed[1:] if h["alternative"]["word"] != "</s>")
        word = chosen["alternative"]["word"]
        completed = self.api(dict(OPTIONS, q=[SENTENCE], target_prefix=[prefix + " " + word]))
        self.addCleanup(self.wait_for_translation, self.expected["translation"])
        self.addCleanup(lambda: self.driver.execute_script(
            "const f = document.getElementById('prefix'); f.value = ''; f.dispatchEvent(new Event('input'))"))
        self.assertEqual(self.texts("#words > span"), self.best["target"])
        self.element("#words > span", position).click()
        shown = lambda: self.driver.execute_script(
            "return Array.from(document.querySelectorAll('#alternatives > li'),"
            " li => [li.dataset.word, li.childNodes[1].textContent, li.querySelector('.score').textContent])")
        WebDriverWait(self.driver, WAIT_SECONDS, poll_frequency=0.05).until(
            lambda _: len(shown()) == 5, "the page lists no alternatives")
        self.assertEqual(shown(), [[h["alternative"]["word"], h["translation"] or "(empty)",
                                    "%.4f" % h["alternative"]["probability"]] for h in listed])
        self.assertEqual(self.having_class("#words > span", "selected"), [position])
        self.element("#alternatives > li", listed.index(chosen)).click()
        self.wait_for_translation(completed["translation"])
        self.assertEqual(self.driver.find_element(By.ID, "prefix").get_attribute("value"), prefix + " " + word)
        self.assert_listed("#nbest > li", [(h["translation"], h["score"]) for h in completed["hypotheses"]])
        self.assertEqual(self.texts(TARGET_LABELS), completed["hypotheses"][0]["target"] + ["</s>"])
        self.assertEqual(self.texts("#alternatives > li"), [])

    def test_typing_constraints_and_phrases_to_avoid_steers_the_translation(self):
        """A word the best translation lacks (from a lower n-best entry, else the vocabulary) typed as a
        constraint and the best translation's first word as a phrase to avoid: the page shows the API's
        translation, n-best list and heatmap for both, which holds the one and not the other; cleared,
        the plain translation again."""
        best_words = self.best["translation"].split()
        avoid = best_words[0]
        with open(os.path.join(self.model, "vocab.tgt"), encoding="utf-8") as f:
            vocabulary = f.read().split()
        constraint = next(w for w in [w for h in self.expected["hypotheses"][1:] for w in h["translation"].split()]
                          + vocabulary if w.isalpha() and w not in best_words)
        steered = self.api(dict(OPTIONS, q=[SENTENCE], constraints=[[constraint]], avoid=[[avoid]]))
        words = steered["translation"].split()
        self.assertIn(constraint, words)
        self.assertNotIn(avoid, words)
        self.addCleanup(self.wait_for_translation, self.expected["translation"])
        self.addCleanup(lambda: self.driver.execute_script(
            "for (const id of ['constraints', 'avoid']) {"
            " const f = document.getElementById(id); f.value = ''; f.dispatchEvent(new Event('input')) }"))
        self.driver.find_element(By.ID, "constraints").send_keys(constraint)
        self.driver.find_element(By.ID, "avoid").send_keys(avoid)
        self.wait_for_translation(steered["translation"])
        self.assert_listed("#nbest > li", [(h["translation"], h["score"]) for h in steered["hypotheses"]])
        self.assertEqual(self.texts(TARGET_LABELS), steered["hypotheses"][0]["target"] + ["</s>"])

    def api(self, body):
        """POST /translate of one sentence: its entry of "translations"."""
        request = urllib.request.Request(self.url + "translate", json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=WAIT_SECONDS) as response:
            return json.load(response)["translations"][0]

    def test_decoding_controls_give_the_apis_n_best_list(self):
        """The four decoding controls typed into their fields: the n-best list, scores included (the
        penalties move every score), becomes the API's for those controls; reset, the plain list again."""
        controls = {"max-length-factor": 1.5, "word-penalty": 0.5, "length-penalty-alpha": 0.6,
                    "coverage-penalty": 0.2}
        body = dict(OPTIONS, q=[SENTENCE], **{name.replace("-", "_"): v for name, v in controls.items()})
        del body["normalize"]  # as the page sends it: the length penalty replaces normalize
        request = urllib.request.Request(self.url + "translate", json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=WAIT_SECONDS) as response:
            controlled = json.load(response)["translations"][0]["hypotheses"]
        plain = self.expected["hypotheses"]
        self.assertNotEqual([h["score"] for h in controlled], [h["score"] for h in plain])
        self.addCleanup(self.wait_for_n_best, plain)
        self.addCleanup(self.driver.execute_script,
                        "for (const [id, value] of arguments[0]) {"
                        " const f = document.getElementById(id); f.value = value; f.dispatchEvent(new Event('input')) }",
                        [["max-length-factor", "0"], ["word-penalty", "0"], ["length-penalty-alpha", ""],
                         ["coverage-penalty", "0"]])
        for name, value in controls.items():
            field = self.driver.find_element(By.ID, name)
            field.clear()
            field.send_keys(str(value))
        self.wait_for_n_best(controlled)
        self.assert_listed("#nbest > li", [(h["translation"], h["score"]) for h in controlled])

    def wait_for_n_best(self, hypotheses):
        """Until the n-best list shows these hypotheses, texts and scores (4 decimals)."""
        def shown(_):
            listed = self.listed("#nbest > li")
            return len(listed) == len(hypotheses) and all(
                text == (h["translation"] or "(empty)") and abs(score - h["score"]) <= 5e-5 + 1e-9
                for (text, score), h in zip(listed, hypotheses))
        WebDriverWait(self.driver, WAIT_SECONDS, poll_frequency=0.05).until(
            shown, "the page does not show the n-best list %r" % [h["translation"] for h in hypotheses])

    def wait_for_translation(self, translation):
        WebDriverWait(self.driver, WAIT_SECONDS, poll_frequency=0.05).until(
            lambda _: [text for text, _ in self.listed("#translations > li")] == [translation or "(empty)"],
            "the page does not show %r" % translation)

    def test_screenshot(self):
        """A PNG of the page with a target word in the middle clicked and its strongest cell hovered."""
        row = len(self.best["target"]) // 2
        self.click_target(row)
        self.hover(row, self.strongest(row))
        path = os.environ.get("RNNSEARCH_PAGE_SCREENSHOT", "serve-page.png")
        self.assertTrue(self.driver.save_screenshot(path))
        with open(path, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    unittest.main()
