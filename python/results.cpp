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

}  // namespace rnnsearch::python
