#include "results.h"

#include "rnnsearch/output/alignment.h"

namespace py = pybind11;

namespace rnnsearch::python {

PyTranslation translation_result(const LineTranslation& t, const TokenizerOptions& tokenizer, bool return_attention,
                                 bool detokenize) {
  PyTranslation result{t.line, t.source, {}, t.warning};
  for (const Hypothesis& h : t.hypotheses) {
    PyHypothesis p{output_text(h.words, tokenizer, detokenize), h.words, h.score, h.log_prob,
                   h.finished, nullptr, std::nullopt, std::nullopt};
    if (h.alternative >= 0) p.alternative = alternative_word(h);
    if (return_attention) {
      p.attention = std::make_shared<Attention>(Attention{OutputPrinter::record(t, h)});
      p.alignment = hard_alignment(h.alignment);
    }
    result.hypotheses.push_back(std::move(p));
  }
  return result;
}

PyScore score_result(const ScoredPair& pair, bool return_attention) {
  PyScore s{pair.line, pair.source, pair.target, std::nullopt, std::nullopt, nullptr, std::nullopt, pair.warning};
  if (pair.scored()) {
    s.log_prob = pair.log_prob;
    s.score = pair.score;
  }
  if (pair.scored() && return_attention) {
    s.attention = std::make_shared<Attention>(Attention{OutputPrinter::record(pair)});
    s.alignment = hard_alignment(pair.alignment);
  }
  return s;
}

py::array_t<float> attention_matrix(const py::object& self) {
  const Alignment& a = self.cast<const Attention&>().record.alignment;
  py::array_t<float> array(std::vector<py::ssize_t>{a.rows, a.cols},
                           std::vector<py::ssize_t>{static_cast<py::ssize_t>(a.cols * sizeof(float)),
                                                    static_cast<py::ssize_t>(sizeof(float))},
                           a.weights.data(), self);
  array.attr("setflags")(py::arg("write") = false);
  return array;
}

PyObject*& input_warning() {
  static PyObject* warning = nullptr;
  return warning;
}

void warn(const char* what, const std::vector<std::pair<size_t, std::string>>& warnings) {
  for (const auto& [index, warning] : warnings) {
    const std::string text = std::string(what) + "[" + std::to_string(index) + "]: " + warning;
    if (PyErr_WarnEx(input_warning(), text.c_str(), 1) < 0) throw py::error_already_set();
  }
}

std::vector<Pairs> aligned_links(const std::vector<align::AlignedPair>& pairs) {
  std::vector<Pairs> alignments;
  std::vector<std::pair<size_t, std::string>> warnings;
  for (const align::AlignedPair& pair : pairs) {
    if (!pair.warning.empty()) warnings.emplace_back(pair.line, pair.warning);
    Pairs links;
    for (const align::Link& link : pair.links) links.emplace_back(link.source, link.target);
    alignments.push_back(std::move(links));
  }
  warn("pairs", warnings);
  return alignments;
}

}  // namespace rnnsearch::python
