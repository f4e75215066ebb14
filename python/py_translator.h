#pragma once
// The Python class rnnsearch.Translator (docs/python.md): a model or an ensemble loaded once, and
// the calls `rnnsearch translate`, `score` and `align` make, each argument read by
// call_arguments.h / steering_args.h and the options made by the library (decode/call_options.h),
// so that its results are the command line's:
//
//   Translator(model, threads, precision)   load_ensemble once; set_threads, precision_option
//   .translate(sentences, ...)              a TranslatorPool's Translator, translate_chunks: the
//                                           CLI's chunks of batch_size × maxi_batch lines
//   .score(sources, targets, ...)           Scorer::score over all pairs, as `rnnsearch score`
//   .align(sources, targets, ...)           the hard alignment of score (`score --alignment hard`); with
//                                           reverse=, method= or symmetrize=, align::Aligner, as `rnnsearch align`
//
// The GIL is released while C++ computes; a Translator's decoders are not reentrant, so each
// Python Translator has a lock and calls on one Translator from several threads run one after
// the other (different Translators run at once).
#include <pybind11/pybind11.h>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "rnnsearch/decode/call_options.h"
#include "rnnsearch/decode/translator_pool.h"
#include "rnnsearch/kernels/precision.h"
#include "rnnsearch/model/model_io.h"
#include "results.h"

namespace rnnsearch::python {

class PyTranslator {
 public:
  PyTranslator(const pybind11::object& model, int threads, const std::string& precision);

  std::vector<PyTranslation> translate(const pybind11::object& sentences, bool replace_unk, int batch_size,
                                       bool return_attention, const std::string& alignment_units, int max_length,
                                       int maxi_batch, bool detokenize, const pybind11::object& target_prefix,
                                       const pybind11::object& constraints, const pybind11::object& avoid,
                                       const pybind11::kwargs& decoding);

  std::vector<PyScore> score(const pybind11::object& sources, const pybind11::object& targets, bool return_attention,
                             int batch_size, int max_length, const std::string& alignment_units,
                             const pybind11::kwargs& ranking_keywords);

  // `score --alignment hard`: a pair that is not scored has no pairs (an empty line there).
  // With reverse, method or symmetrize: `rnnsearch align` (align::Aligner), its links sorted
  // and never on </s>; the reverse Translator's models score the swapped pairs on this one's
  // threads, both Translators locked.
  std::vector<Pairs> align(const pybind11::object& sources, const pybind11::object& targets, int batch_size, int max_length,
                           const pybind11::object& reverse, const std::optional<std::string>& method,
                           const std::optional<std::string>& symmetrize);

  std::vector<std::string> weights_paths() const;
  const char* precision() const { return precision_name(precision_); }
  int threads() const { return threads_; }

 private:
  // What score_command runs: all pairs in one Scorer::score.
  std::vector<ScoredPair> run_scorer(const pybind11::object& sources, const pybind11::object& targets, bool alignment,
                                     int batch_size, int max_length, const std::string& alignment_units,
                                     const BeamOptions& ranking);

  // A call's sizes, this Translator's threads, --alignment-units (decode/call_options.h).
  CallOptions call_options(int batch_size, int max_length, const std::string& alignment_units) const;

  std::vector<std::string> dirs_;
  int threads_ = 1;
  Precision precision_ = Precision::fp32;
  std::vector<Model> models_;  // never resized: Translators keep references into it
  std::vector<const Parameters<float>*> weights_;
  std::mutex mutex_;  // one call at a time: Translator and Scorer workspaces are not shared
  std::optional<TranslatorPool> translators_;
};

}  // namespace rnnsearch::python
