#include "rnnsearch/align/aligner.h"

#include <algorithm>

#include "rnnsearch/decode/call_options.h"
#include "rnnsearch/error.h"

namespace rnnsearch::align {

namespace {

bool same_shape(const Alignment& a, const Alignment& b) { return a.rows == b.rows && a.cols == b.cols; }

ScorerOptions aligning_scorer_options(const AlignerOptions& options) {
  CallOptions call;
  call.batch_size = options.batch_size;
  call.max_length = options.max_length;
  call.threads = options.threads;
  call.shows_attention = true;  // of words: pieces are merged into the words they make
  BeamOptions ranking = log_prob_ranking();
  ranking.raw_attention = options.raw_attention ? 1 : 0;
  return scorer_options(ranking, call);
}

}  // namespace

Aligner::Aligner(const std::vector<Model>& forward, const std::vector<Model>& reverse, const AlignerOptions& options)
    : options_(options) {
  if (forward.empty()) throw Error("aligning needs a model");
  options_.symmetrize = resolved_symmetrization(!reverse.empty(), options.method, options.symmetrize);
  if (!reverse.empty() && reverse.front().tokenizer.kind != forward.front().tokenizer.kind)
    throw Error(std::string("the reverse model reads ") + tokenizer_kind_name(reverse.front().tokenizer.kind) +
                " text and the model " + tokenizer_kind_name(forward.front().tokenizer.kind) +
                " text: their words would differ");
  const ScorerOptions sopts = aligning_scorer_options(options);
  forward_ = std::make_unique<Scorer>(forward.front(), ensemble_weights(forward), sopts);
  if (!reverse.empty()) reverse_ = std::make_unique<Scorer>(reverse.front(), ensemble_weights(reverse), sopts);
}

Aligner::~Aligner() = default;

void Aligner::set_reading(const AlignMethod& method, std::optional<Symmetrization> symmetrize) {
  options_.symmetrize = resolved_symmetrization(reverse_ != nullptr, method, symmetrize);
  options_.method = method;
}

std::vector<AlignedPair> Aligner::align(const std::vector<std::string>& src_lines,
                                        const std::vector<std::string>& tgt_lines, size_t first_line,
                                        const std::function<void(size_t pairs)>& finished) {
  if (src_lines.size() != tgt_lines.size())
    throw Error("the sources and targets differ in length: " + std::to_string(src_lines.size()) + " and " +
                std::to_string(tgt_lines.size()));
  std::vector<AlignedPair> pairs;
  pairs.reserve(src_lines.size());
  for (size_t start = 0; start < src_lines.size(); start += kChunk) {
    const auto from = static_cast<long>(start), to = static_cast<long>(std::min(src_lines.size(), start + kChunk));
    const std::vector<std::string> src(src_lines.begin() + from, src_lines.begin() + to),
        tgt(tgt_lines.begin() + from, tgt_lines.begin() + to);
    // Progress counts the pairs of the last direction: a pair is done when both are.
    std::vector<ScoredPair> forward = forward_->score(src, tgt, first_line + start, reverse_ ? nullptr : finished);
    std::vector<ScoredPair> reverse;
    if (reverse_) reverse = reverse_->score(tgt, src, first_line + start, finished);
    for (size_t k = 0; k < forward.size(); ++k) pairs.push_back(links_of(forward[k], reverse_ ? &reverse[k] : nullptr));
  }
  return pairs;
}

// A reverse matrix is (source words + 1) × (target words + 1) of the same words, both
// models reading the same kind of text; a pair whose words differ anyway (a words model
// that lowercases and one that does not) is left unaligned with a warning.
AlignedPair Aligner::links_of(ScoredPair& forward, ScoredPair* reverse) const {
  AlignedPair pair{forward.line, std::move(forward.source), std::move(forward.target), {}, forward.warning, false,
                   forward.target_side};
  if (!forward.scored()) return pair;
  const Alignment& f = forward.alignment;
  if (reverse && !reverse->scored()) {
    pair.warning = "the reverse model: " + reverse->warning;
    pair.target_side = !reverse->target_side;  // its source is the pair's target
    return pair;
  }
  if (reverse && !same_shape(transposed(reverse->alignment), f)) {
    pair.warning = "the reverse model reads " + std::to_string(reverse->alignment.cols - 1) + " target and " +
                   std::to_string(reverse->alignment.rows - 1) + " source words, the model " +
                   std::to_string(f.rows - 1) + " and " + std::to_string(f.cols - 1) +
                   "; not aligned, its output line is empty";
    return pair;
  }
  pair.links = pair_links(f, reverse ? &reverse->alignment : nullptr, options_.method, options_.symmetrize);
  pair.aligned = true;
  return pair;
}

}  // namespace rnnsearch::align
