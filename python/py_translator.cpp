#include "py_translator.h"

#include <algorithm>

#include "rnnsearch/align/aligner.h"
#include "rnnsearch/decode/decode_options.h"
#include "rnnsearch/decode/scorer.h"
#include "rnnsearch/error.h"
#include "rnnsearch/output/alignment.h"
#include "rnnsearch/output/output.h"
#include "rnnsearch/util/checks.h"
#include "rnnsearch/util/cpu.h"
#include "call_arguments.h"
#include "steering_args.h"

namespace py = pybind11;

namespace rnnsearch::python {

PyTranslator::PyTranslator(const py::object& model, int threads, const std::string& precision) : dirs_(model_dirs(model)) {
  py::gil_scoped_release release;
  threads_ = set_threads(threads);
  precision_ = precision_option(precision, PrecisionUse::decoding);
  models_ = load_ensemble(dirs_);
  weights_ = ensemble_weights(models_);
  translators_.emplace(models_, 4);  // a few option sets' Translators, kept for the next call
}

std::vector<PyTranslation> PyTranslator::translate(const py::object& sentences, bool replace_unk, int batch_size,
                                                   bool return_attention, const std::string& alignment_units, int max_length,
                                                   int maxi_batch, bool detokenize, const py::object& target_prefix,
                                                   const py::object& constraints, const py::object& avoid,
                                                   const py::kwargs& decoding) {
  const BeamOptions beam = decode_keywords(decoding, DecodeUse::translate).beam;
  const std::vector<std::string> lines = text_lines(sentences, "sentences");
  const std::vector<LineSteering> steering = steering_arguments(lines.size(), target_prefix, constraints, avoid, beam);
  std::vector<PyTranslation> results;
  {
    py::gil_scoped_release release;
    CallOptions call = call_options(batch_size, max_length, alignment_units);
    call.precision = precision_;
    call.shows_attention = return_attention;
    call.replace_unk = replace_unk;
    const TranslatorOptions options = translator_options(beam, call);  // as translate_command's
    check_at_least("maxi-batch", maxi_batch, 1);
    std::lock_guard<std::mutex> lock(mutex_);
    const std::shared_ptr<Translator> translator = translators_->get(options);
    set_threads(threads_);  // OpenMP's setting is the calling thread's
    size_t taken = 0;
    translate_chunks(
        *translator, static_cast<size_t>(batch_size) * static_cast<size_t>(maxi_batch),
        [&](size_t count, std::vector<std::string>& part, std::vector<LineSteering>& part_steering) {
          const size_t end = std::min(lines.size(), taken + count);
          part.assign(lines.begin() + static_cast<long>(taken), lines.begin() + static_cast<long>(end));
          if (!steering.empty())
            part_steering.assign(steering.begin() + static_cast<long>(taken), steering.begin() + static_cast<long>(end));
          taken = end;
          return !part.empty();
        },
        [&](std::vector<LineTranslation>& translations) {
          for (const LineTranslation& t : translations) results.push_back(translation_result(t, models_.front().tokenizer, return_attention, detokenize));
        });
  }
  std::vector<std::pair<size_t, std::string>> warnings;
  for (const PyTranslation& t : results)
    if (!t.warning.empty()) warnings.emplace_back(t.line, t.warning);
  warn("sentences", warnings);
  return results;
}

std::vector<PyScore> PyTranslator::score(const py::object& sources, const py::object& targets, bool return_attention,
                                         int batch_size, int max_length, const std::string& alignment_units,
                                         const py::kwargs& ranking_keywords) {
  const BeamOptions ranking = decode_keywords(ranking_keywords, DecodeUse::score).beam;
  std::vector<PyScore> results;
  for (const ScoredPair& pair :
       run_scorer(sources, targets, return_attention, batch_size, max_length, alignment_units, ranking)) {
    results.push_back(score_result(pair, return_attention));
  }
  return results;
}

// `score --alignment hard`: a pair that is not scored has no pairs (an empty line there).
// With reverse, method or symmetrize: `rnnsearch align` (align::Aligner), its links sorted
// and never on </s>; the reverse Translator's models score the swapped pairs on this one's
// threads, both Translators locked.
std::vector<Pairs> PyTranslator::align(const py::object& sources, const py::object& targets, int batch_size, int max_length,
                                       const py::object& reverse, const std::optional<std::string>& method,
                                       const std::optional<std::string>& symmetrize) {
  std::vector<Pairs> alignments;
  if (reverse.is_none() && !method && !symmetrize) {
    for (const ScoredPair& pair :
         run_scorer(sources, targets, true, batch_size, max_length, "words", log_prob_ranking()))
      alignments.push_back(pair.scored() ? hard_alignment(pair.alignment) : Pairs{});
    return alignments;
  }
  if (!reverse.is_none() && !py::isinstance<PyTranslator>(reverse))
    throw py::type_error("reverse must be a Translator of the reverse direction (target to source), not " +
                         std::string(py::str(reverse.get_type().attr("__name__"))));
  PyTranslator* other = reverse.is_none() ? nullptr : &reverse.cast<PyTranslator&>();
  align::AlignerOptions options;
  options.batch_size = batch_size;
  options.max_length = max_length;
  options.threads = threads_;
  options.method = align::parse_align_method(method.value_or("argmax"));
  if (symmetrize) options.symmetrize = align::parse_symmetrization(*symmetrize);
  const auto [src_lines, tgt_lines] = pair_lines(sources, targets);
  std::vector<align::AlignedPair> pairs;
  {
    py::gil_scoped_release release;
    std::unique_lock<std::mutex> lock(mutex_, std::defer_lock), other_lock;
    if (other && other != this) {
      other_lock = std::unique_lock<std::mutex>(other->mutex_, std::defer_lock);
      std::lock(lock, other_lock);
    } else {
      lock.lock();
    }
    const std::vector<Model> none;
    align::Aligner aligner(models_, other ? other->models_ : none, options);
    set_threads(threads_);
    pairs = aligner.align(src_lines, tgt_lines, 0);
  }
  return aligned_links(pairs);
}

std::vector<std::string> PyTranslator::weights_paths() const {
  std::vector<std::string> paths;
  for (const Model& m : models_) paths.push_back(m.weights_path);
  return paths;
}

// What score_command runs: all pairs in one Scorer::score.
std::vector<ScoredPair> PyTranslator::run_scorer(const py::object& sources, const py::object& targets, bool alignment,
                                                 int batch_size, int max_length, const std::string& alignment_units,
                                                 const BeamOptions& ranking) {
  const auto [src_lines, tgt_lines] = pair_lines(sources, targets);
  std::vector<ScoredPair> pairs;
  {
    py::gil_scoped_release release;
    CallOptions call = call_options(batch_size, max_length, alignment_units);
    call.shows_attention = alignment;
    const ScorerOptions options = scorer_options(ranking, call);  // as score_command's
    std::lock_guard<std::mutex> lock(mutex_);
    Scorer scorer(models_.front(), weights_, options);
    set_threads(threads_);
    pairs = scorer.score(src_lines, tgt_lines, 0);
  }
  std::vector<std::pair<size_t, std::string>> warnings;
  for (const ScoredPair& pair : pairs)
    if (!pair.warning.empty()) warnings.emplace_back(pair.line, pair.warning);
  warn("pairs", warnings);
  return pairs;
}

// A call's sizes, this Translator's threads, --alignment-units (decode/call_options.h).
CallOptions PyTranslator::call_options(int batch_size, int max_length, const std::string& alignment_units) const {
  CallOptions call;
  call.batch_size = batch_size;
  call.max_length = max_length;
  call.threads = threads_;
  call.piece_alignments = parse_alignment_units(alignment_units);
  return call;
}

}  // namespace rnnsearch::python
