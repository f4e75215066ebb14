#pragma once
// The results of the module's calls as Python sees them (docs/python.md): translations, scores
// and their attention, made from the library's (decode/translator.h, decode/scorer.h) with the
// command line's text, JSON record and hard alignment.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rnnsearch/align/aligner.h"
#include "rnnsearch/decode/alternatives.h"
#include "rnnsearch/decode/scorer.h"
#include "rnnsearch/decode/translator.h"
#include "rnnsearch/output/output.h"
#include "rnnsearch/text/tokenizer.h"

namespace rnnsearch::python {

using Pairs = std::vector<std::pair<int, int>>;  // hard alignment: (source, target) positions

// One attention matrix with its labels: the record `--format json` and `--heatmaps` show.
struct Attention {
  TranslationRecord record;
  // The labels of the rows and columns: tokens (or pieces) and </s>.
  static std::vector<std::string> labels(std::vector<std::string> tokens) {
    tokens.push_back("</s>");
    return tokens;
  }
};

struct PyHypothesis {
  std::string text;                  // as `rnnsearch translate` prints it
  std::vector<std::string> tokens;   // the words of the translation
  double score = 0, log_prob = 0;
  bool finished = false;
  std::shared_ptr<Attention> attention;  // with return_attention
  std::optional<Pairs> alignment;        // with return_attention
  std::optional<AlternativeWord> alternative;  // with alternatives=K
};

struct PyTranslation {
  size_t line = 0;
  std::vector<std::string> source;
  std::vector<PyHypothesis> hypotheses;  // none for an empty or invalid line
  std::string warning;
  const PyHypothesis* best() const { return hypotheses.empty() ? nullptr : &hypotheses.front(); }
};

struct PyScore {
  size_t line = 0;
  std::vector<std::string> source, target;
  std::optional<double> log_prob;  // None: not scored (see warning)
  std::optional<double> score;     // the ranking score (log_prob unless ranking options say)
  std::shared_ptr<Attention> attention;
  std::optional<Pairs> alignment;
  std::string warning;
};

// A line's translation, its text as `rnnsearch translate` prints it with the model's tokenizer.
PyTranslation translation_result(const LineTranslation& t, const TokenizerOptions& tokenizer, bool return_attention,
                                 bool detokenize);

// A scored pair; log_prob and score None when it was not scored.
PyScore score_result(const ScoredPair& pair, bool return_attention);

// The attention matrix of an Attention (`self`) as a read-only float32 array over its own weights.
pybind11::array_t<float> attention_matrix(const pybind11::object& self);

// rnnsearch.InputWarning, set once when the module is made (it lives as long as the interpreter).
PyObject*& input_warning();

// Each warning of a call as a Python warning, "WHAT[INDEX]: WARNING" (the command line prints
// them on stderr).
void warn(const char* what, const std::vector<std::pair<size_t, std::string>>& warnings);

// The links of `rnnsearch align` per pair ([] for a pair left unaligned), its warnings as
// Python warnings.
std::vector<Pairs> aligned_links(const std::vector<align::AlignedPair>& pairs);

}  // namespace rnnsearch::python
