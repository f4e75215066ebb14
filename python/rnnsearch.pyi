# Type stub of the compiled module `rnnsearch` (python/rnnsearch_module.cpp; docs/python.md),
# installed beside it by `pip install .` so that editors and type checkers know its API.
import os
from typing import Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

__version__: str

class Error(RuntimeError):
    """What the command line refuses with its one-line error, with that line's message."""

class InputWarning(UserWarning):
    """A sentence left untranslated or unscored, or cut (as the command line warns)."""

def cpu() -> str:
    """The CPU features rnnsearch uses (RNNSEARCH_CPU caps them)."""

def build_info() -> str:
    """What this build uses for each optional feature, or why it is off (as `rnnsearch --version`)."""

class AlignmentScores:
    """AER, precision and recall of links against gold links, over a corpus (str(): align-eval's line)."""
    @property
    def aer(self) -> float: ...
    @property
    def precision(self) -> float: ...
    @property
    def recall(self) -> float: ...
    sentences: int
    links: int
    sure: int
    possible: int

def alignment_error_rate(gold: Sequence[Union[str, bytes]], links: Sequence[Union[str, bytes]], *,
                         gold_zero_based: bool = False, tail: bool = False) -> AlignmentScores:
    """As `rnnsearch align-eval`: links are Pharaoh lines (0-based i-j), gold lines i-j sure / ipj possible,
    1-based unless gold_zero_based; tail scores the last lines of a longer links list."""

def hmm_align(sources: Sequence[Union[str, bytes]], targets: Sequence[Union[str, bytes]], *, method: str = "argmax",
              symmetrize: Optional[str] = None, stem: int = 6, prior: float = 0.1, null_probability: float = 0.2,
              ibm1_iterations: int = 5, hmm_iterations: int = 5, agreement: bool = True,
              threads: int = 0, max_length: int = 200, save_tables: Optional[str] = None,
              tables: Optional[str] = None) -> list[list[tuple[int, int]]]:
    """As `rnnsearch align --hmm`: IBM model 1 then an HMM aligner each way, trained on these pairs; per pair the
    0-based (source, target) links, sorted ([] and an InputWarning for a pair with an empty side, invalid UTF-8 or
    a side longer than max_length words). save_tables=DIR also writes what training learnt (--save-hmm);
    tables=DIR aligns with tables saved earlier, without training (--hmm-tables)."""

class Attention:
    """An attention matrix: rows target tokens + </s>, columns source tokens + </s>."""
    @property
    def matrix(self) -> npt.NDArray[np.float32]: ...
    def __array__(self, dtype: Optional[npt.DTypeLike] = None, copy: Optional[bool] = None) -> np.ndarray: ...
    @property
    def source(self) -> list[str]: ...
    @property
    def target(self) -> list[str]: ...
    @property
    def shape(self) -> tuple[int, int]: ...
    @property
    def line(self) -> int: ...
    @property
    def score(self) -> float: ...
    def to_svg(self) -> str:
        """The heatmap as SVG text, as `--heatmaps` writes it."""
    def _repr_svg_(self) -> str: ...
    def save(self, path: Union[str, os.PathLike[str]]) -> None:
        """Writes the heatmap SVG to path."""

class Alternative:
    """Where a hypothesis of alternatives=K parts from the others."""
    position: int
    word: str
    probability: float

class Hypothesis:
    """One translation of a sentence."""
    text: str
    tokens: list[str]
    score: float
    log_prob: float
    finished: bool
    attention: Optional[Attention]
    alignment: Optional[list[tuple[int, int]]]
    alternative: Optional[Alternative]

class Translation:
    """The result for one input sentence: its hypotheses, best first."""
    line: int
    source: list[str]
    hypotheses: list[Hypothesis]
    warning: str
    @property
    def text(self) -> str: ...
    @property
    def tokens(self) -> list[str]: ...
    @property
    def score(self) -> Optional[float]: ...
    @property
    def attention(self) -> Optional[Attention]: ...
    @property
    def alignment(self) -> Optional[list[tuple[int, int]]]: ...

class Score:
    """The forced decoding of one sentence pair."""
    line: int
    source: list[str]
    target: list[str]
    log_prob: Optional[float]
    score: Optional[float]
    attention: Optional[Attention]
    alignment: Optional[list[tuple[int, int]]]
    warning: str

Sentences = Sequence[Union[str, bytes]]

class Translator:
    """A model, or an ensemble of models, loaded once."""
    def __init__(self, model: Union[str, os.PathLike[str], Sequence[Union[str, os.PathLike[str]]]],
                 threads: int = 0, precision: str = "auto") -> None:
        """Loads a model directory (model.best.npz when present), or an ensemble from a list of them.
        threads is --threads (0 = OMP_NUM_THREADS when set, else all cores); precision is --precision:
        auto, fp32, bf16 or int8."""
    # **decoding / **ranking: the command line's decoding options, spelt beam_size for --beam-size
    # (None = not given). Which ones, their defaults, ranges and help: help(Translator.translate),
    # made from the one table every shell reads (include/rnnsearch/decode/decode_options.h).
    def translate(self, sentences: Sentences, *, replace_unk: bool = False, batch_size: int = 32,
                  return_attention: bool = False, alignment_units: str = "words", max_length: int = 200,
                  maxi_batch: int = 10, detokenize: bool = False, target_prefix: Optional[Sentences] = None,
                  constraints: Optional[Sequence[Sentences]] = None, avoid: Optional[Sequence[Sentences]] = None,
                  **decoding: Optional[float]) -> list[Translation]:
        """Translates sentences as `rnnsearch translate` does, byte for byte; one Translation per sentence."""
    def score(self, sources: Sentences, targets: Sentences, *, return_attention: bool = False,
              batch_size: int = 32, max_length: int = 200, alignment_units: str = "words",
              **ranking: Optional[float]) -> list[Score]:
        """Forced decoding of given translations, as `rnnsearch score`: one Score per pair. With ranking
        keywords each Score's score is what translate ranks it by."""
    def align(self, sources: Sentences, targets: Sentences, *, batch_size: int = 32, max_length: int = 200,
              reverse: Optional["Translator"] = None, method: Optional[str] = None,
              symmetrize: Optional[str] = None) -> list[list[tuple[int, int]]]:
        """0-based (source, target) links per pair. By default the hard alignment of `rnnsearch score
        --alignment hard`; with reverse (a target→source Translator), method ('argmax', 'threshold:X',
        'average', 'average-threshold:X') or symmetrize (as --symmetrize), those of `rnnsearch align`."""
    @property
    def models(self) -> list[str]: ...
    @property
    def precision(self) -> str: ...
    @property
    def threads(self) -> int: ...
