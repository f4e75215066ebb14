// The Python module `rnnsearch` (docs/python.md): translate, score and align in-process, with
// the attention as numpy arrays. A thin binding: it declares the module's classes and functions,
// whose work is done by the library the command line runs, through
//
//   Translator                              py_translator.h (translate, score, align)
//   Translation, Hypothesis, Score, Attention  results.h
//   alignment_error_rate(gold, links)       align::evaluate_alignments, as `rnnsearch align-eval`
//   hmm_align(sources, targets, ...)        align::HmmTables, as `rnnsearch align --hmm` (hmm_align.cpp)
//
// rnnsearch::Error becomes rnnsearch.Error with the command line's one-line message.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include "rnnsearch/align/aer.h"
#include "rnnsearch/decode/alternatives.h"
#include "rnnsearch/decode/decode_options.h"
#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/output/heatmap.h"
#include "rnnsearch/util/build_info.h"
#include "rnnsearch/util/cpu.h"
#include "call_arguments.h"
#include "hmm_align.h"
#include "py_translator.h"
#include "results.h"

namespace py = pybind11;

namespace rnnsearch::python {
namespace {

std::string quoted(const std::string& text) { return std::string(py::repr(py::str(text))); }

}  // namespace
}  // namespace rnnsearch::python

PYBIND11_MODULE(rnnsearch, m) {
  using namespace rnnsearch;
  using namespace rnnsearch::python;
  m.doc() = "rnnsearch: translate, score and align with RNNsearch models; attention as numpy arrays (docs/python.md)";
  m.attr("__version__") = build_info().version;
  py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
  PyObject*& g_input_warning = input_warning();
  g_input_warning = PyErr_NewExceptionWithDoc(
      "rnnsearch.InputWarning", "A sentence left untranslated or unscored, or cut (as the command line warns).",
      PyExc_UserWarning, nullptr);
  if (!g_input_warning) throw py::error_already_set();
  m.attr("InputWarning") = py::handle(g_input_warning);
  // Reads RNNSEARCH_CPU and caps oneDNN before any product, as the command line does first.
  cpu_features();
  m.def("cpu", [] { return describe(cpu_features()); }, "The CPU features rnnsearch uses (RNNSEARCH_CPU caps them).");
  m.def("build_info", [] { return build_info().features; },
        "What this build uses for each optional feature, or why it is off (as `rnnsearch --version`).");

  py::class_<Attention, std::shared_ptr<Attention>>(m, "Attention",
                                                    "An attention matrix: rows target tokens + </s>, columns source "
                                                    "tokens + </s>; shows itself as a heatmap in Jupyter.")
      .def_property_readonly("matrix", &attention_matrix, "float32 array (target tokens + 1) × (source tokens + 1)")
      .def("__array__", [](const py::object& self, const py::object& dtype, const py::object&) {
             py::object array = attention_matrix(self);
             return dtype.is_none() ? array : array.attr("astype")(dtype);
           }, py::arg("dtype") = py::none(), py::arg("copy") = py::none())
      .def_property_readonly("source", [](const Attention& a) { return Attention::labels(a.record.source); },
                             "column labels: source tokens (or pieces) and </s>")
      .def_property_readonly("target", [](const Attention& a) { return Attention::labels(a.record.target); },
                             "row labels: target tokens (or pieces) and </s>")
      .def_property_readonly("shape", [](const Attention& a) {
        return py::make_tuple(a.record.alignment.rows, a.record.alignment.cols);
      })
      .def_property_readonly("line", [](const Attention& a) { return a.record.line; })
      .def_property_readonly("score", [](const Attention& a) { return a.record.score; })
      .def("to_svg", [](const Attention& a) { return heatmap_svg(a.record); },
           "The heatmap as SVG text, as `--heatmaps` writes it.")
      .def("_repr_svg_", [](const Attention& a) { return heatmap_svg(a.record); })
      .def("save", [](const Attention& a, const py::object& path) {
             const std::string file = py::module_::import("os").attr("fsdecode")(path).cast<std::string>();
             const std::string svg = heatmap_svg(a.record);
             py::gil_scoped_release release;
             write_file_atomically(file, svg);
           }, py::arg("path"), "Writes the heatmap SVG to path.")
      .def("__repr__", [](const Attention& a) {
        return "<rnnsearch.Attention " + std::to_string(a.record.alignment.rows) + "x" +
               std::to_string(a.record.alignment.cols) + " of line " + std::to_string(a.record.line) + ">";
      });

  py::class_<AlternativeWord>(m, "Alternative", "Where a hypothesis of alternatives=K parts from the others.")
      .def_readonly("position", &AlternativeWord::position,
                    "the index of its word in tokens (len(tokens): the translation ends there)")
      .def_readonly("word", &AlternativeWord::word, "that word ('</s>' when it ends there)")
      .def_readonly("probability", &AlternativeWord::probability,
                    "p(word | source, the words before it): of its first piece with subwords")
      .def("__repr__", [](const AlternativeWord& a) {
        return "Alternative(position=" + std::to_string(a.position) + ", word=" + quoted(a.word) +
               ", probability=" + std::string(py::repr(py::float_(a.probability))) + ")";
      });

  py::class_<PyHypothesis>(m, "Hypothesis", "One translation of a sentence.")
      .def_readonly("text", &PyHypothesis::text, "the translation as `rnnsearch translate` prints it")
      .def_readonly("tokens", &PyHypothesis::tokens, "its words")
      .def_readonly("score", &PyHypothesis::score, "log_prob / length^normalize (what n-best lists print)")
      .def_readonly("log_prob", &PyHypothesis::log_prob)
      .def_readonly("finished", &PyHypothesis::finished, "ended with </s> (else cut at the maximum length)")
      .def_readonly("attention", &PyHypothesis::attention, "Attention, with return_attention=True")
      .def_readonly("alignment", &PyHypothesis::alignment,
                    "hard alignment [(source, target), ...], with return_attention=True")
      .def_readonly("alternative", &PyHypothesis::alternative, "Alternative, with alternatives=K; else None")
      .def("__repr__", [](const PyHypothesis& h) {
        return "Hypothesis(text=" + quoted(h.text) + ", score=" + std::string(py::repr(py::float_(h.score))) + ")";
      });

  py::class_<PyTranslation>(m, "Translation", "The result for one input sentence: its hypotheses, best first.")
      .def_readonly("line", &PyTranslation::line, "0-based index of the sentence")
      .def_readonly("source", &PyTranslation::source, "the source tokens translated")
      .def_readonly("hypotheses", &PyTranslation::hypotheses, "best first; empty if not translated")
      .def_readonly("warning", &PyTranslation::warning, "why it was cut or left untranslated; '' if fine")
      .def_property_readonly("text", [](const PyTranslation& t) { return t.best() ? t.best()->text : ""; })
      .def_property_readonly("tokens", [](const PyTranslation& t) {
        return t.best() ? t.best()->tokens : std::vector<std::string>{};
      })
      .def_property_readonly("score", [](const PyTranslation& t) {
        return t.best() ? std::optional<double>(t.best()->score) : std::nullopt;
      })
      .def_property_readonly("attention", [](const PyTranslation& t) {
        return t.best() ? t.best()->attention : nullptr;
      })
      .def_property_readonly("alignment", [](const PyTranslation& t) {
        return t.best() ? t.best()->alignment : std::nullopt;
      })
      .def("__repr__", [](const PyTranslation& t) {
        return "Translation(text=" + quoted(t.best() ? t.best()->text : "") + ", hypotheses=" +
               std::to_string(t.hypotheses.size()) + ")";
      });

  py::class_<PyScore>(m, "Score", "The forced decoding of one sentence pair.")
      .def_readonly("line", &PyScore::line)
      .def_readonly("source", &PyScore::source)
      .def_readonly("target", &PyScore::target)
      .def_readonly("log_prob", &PyScore::log_prob, "log p(target | source) with </s>; None if not scored")
      .def_readonly("score", &PyScore::score,
                    "what translate ranks this target by with score()'s ranking keywords (log_prob without them); "
                    "None if not scored")
      .def_readonly("attention", &PyScore::attention)
      .def_readonly("alignment", &PyScore::alignment)
      .def_readonly("warning", &PyScore::warning)
      .def("__repr__", [](const PyScore& s) {
        return "Score(log_prob=" + (s.log_prob ? std::string(py::repr(py::float_(*s.log_prob))) : "None") + ")";
      });

  py::class_<align::AlignmentCounts>(m, "AlignmentScores",
                                     "AER, precision and recall of links against gold links, over a corpus.")
      .def_property_readonly("aer", &align::AlignmentCounts::aer, "alignment error rate, 0 to 1 (NaN: no links)")
      .def_property_readonly("precision", &align::AlignmentCounts::precision, "|A∩P| / |A| (NaN without links)")
      .def_property_readonly("recall", &align::AlignmentCounts::recall, "|A∩S| / |S| (NaN without sure links)")
      .def_readonly("sentences", &align::AlignmentCounts::sentences)
      .def_readonly("links", &align::AlignmentCounts::links, "|A|")
      .def_readonly("sure", &align::AlignmentCounts::sure, "|S|")
      .def_readonly("possible", &align::AlignmentCounts::possible, "|P| (sure links included)")
      .def("__str__", &align::AlignmentCounts::summary)
      .def("__repr__", [](const align::AlignmentCounts& c) { return "<rnnsearch.AlignmentScores " + c.summary() + ">"; });
  m.def("alignment_error_rate",
        [](const py::object& gold, const py::object& links, bool gold_zero_based, bool tail) {
          return align::evaluate_alignments(text_lines(gold, "gold"), text_lines(links, "links"), gold_zero_based,
                                            tail, "gold", "links");
        },
        py::arg("gold"), py::arg("links"), py::kw_only(), py::arg("gold_zero_based") = false, py::arg("tail") = false,
        "AER, precision and recall of links (Pharaoh lines, 0-based i-j) against gold lines (i-j sure, ipj "
        "possible, 1-based unless gold_zero_based), as `rnnsearch align-eval`; tail scores the last lines of "
        "a longer links list. Errors name 'gold:LINE' or 'links:LINE' (1-based).");

  def_hmm_align(m);

  static const std::string translate_doc = decode_keywords_doc(
      "Translates a list of sentences (str or bytes) as `rnnsearch translate` does, byte for byte; one "
      "Translation per sentence, in order. The keywords are translate's options of the same names; "
      "target_prefix is a list of one prefix per sentence ('' = none), the lines of --target-prefix; "
      "constraints and avoid a list of one list of phrases per sentence ([] = none), the lines of --constraints "
      "and --avoid; "
      "return_attention=True keeps each hypothesis' attention matrix and hard alignment.",
      DecodeUse::translate);
  static const std::string score_doc = decode_keywords_doc(
      "Forced decoding of given translations, as `rnnsearch score`: one Score per pair, in order. With "
      "ranking keywords each Score's score is what translate would rank the target by (else its log_prob).",
      DecodeUse::score);
  py::class_<PyTranslator>(m, "Translator", "A model, or an ensemble of models, loaded once.")
      .def(py::init<const py::object&, int, const std::string&>(), py::arg("model"), py::arg("threads") = 0,
           py::arg("precision") = "auto",
           "Loads a model directory (model.best.npz when present), or an ensemble from a list of them. threads "
           "is --threads (0 = OMP_NUM_THREADS when set, else all cores); precision is --precision: auto, fp32, "
           "bf16 or int8.")
      .def("translate", &PyTranslator::translate, py::arg("sentences"), py::kw_only(),
           py::arg("replace_unk") = false, py::arg("batch_size") = 32, py::arg("return_attention") = false,
           py::arg("alignment_units") = "words", py::arg("max_length") = 200, py::arg("maxi_batch") = 10,
           py::arg("detokenize") = false, py::arg("target_prefix") = py::none(), py::arg("constraints") = py::none(),
           py::arg("avoid") = py::none(), translate_doc.c_str())
      .def("score", &PyTranslator::score, py::arg("sources"), py::arg("targets"), py::kw_only(),
           py::arg("return_attention") = false, py::arg("batch_size") = 32, py::arg("max_length") = 200,
           py::arg("alignment_units") = "words", score_doc.c_str())
      .def("align", &PyTranslator::align, py::arg("sources"), py::arg("targets"), py::kw_only(),
           py::arg("batch_size") = 32, py::arg("max_length") = 200, py::arg("reverse") = py::none(),
           py::arg("method") = py::none(), py::arg("symmetrize") = py::none(),
           "Word alignments of given translations: per pair the 0-based (source, target) positions; [] for a "
           "pair not scored. By default the hard alignment of `rnnsearch score --alignment hard` (which may "
           "point at the source </s>); with reverse (a target→source Translator), method or symmetrize, "
           "`rnnsearch align`'s links: sorted, never on </s>, method 'argmax' (the default), 'threshold:X', "
           "'average' or 'average-threshold:X', symmetrize as --symmetrize (two directions: "
           "'grow-diag-final-and' by default).")
      .def_property_readonly("models", &PyTranslator::weights_paths, "the weight files loaded")
      .def_property_readonly("precision", &PyTranslator::precision, "of the vocabulary projection, as resolved")
      .def_property_readonly("threads", &PyTranslator::threads);
}
