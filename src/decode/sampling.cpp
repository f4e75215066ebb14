#include "rnnsearch/decode/sampling.h"

#include "rnnsearch/decode/beam_search.h"
#include "rnnsearch/decode/top_candidates.h"

namespace rnnsearch {

namespace {

// SplitMix64's output function: a bijection of 64-bit words whose outputs for consecutive
// inputs pass BigCrush.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

double sampling_uniform(uint64_t seed, uint64_t key, uint64_t sample, uint64_t step) {
  const uint64_t bits = mix(mix(mix(mix(seed) ^ key) ^ sample) ^ step);
  return static_cast<double>(bits >> 11) * 0x1.0p-53;  // the top 53 bits: [0, 1)
}

// The beam search's lanes (beam_search.h): each sample, or each alternative once they part
// (alternatives.cpp), still running takes its next token from its own row: a draw, or for an
// alternative the best token (top-1). Right after <s> (or the target prefix) the sentence has
// one row, and each of its max(n_best, 1) samples draws from it. Column k is word k, or the
// shortlist's k-th word; the tokens a row may not propose (TokenFilter) are never drawn.
template <class T>
void BeamSearch<T>::lane_candidates(const Sentence& s, int first_row, bool word_start) {
  const bool parting = s.live.size() == 1 && s.live.front().lane < 0;
  const int columns = static_cast<int>(log_probs_->cols());
  const int* words = shortlist_ ? shortlist_->data() : nullptr;
  const TokenFilter proposable{word_join_, blocked_, word_start};
  int row = first_row;
  const auto excluded = [&](int k) { return !proposable(row, words ? words[k] : k); };
  const bool greedy = options_.alternatives > 0;  // an alternative's lane: the best token (top-1)
  const int draws = parting ? outputs() : static_cast<int>(s.live.size());
  heap_.clear();
  for (int d = 0; d < draws; ++d) {
    const int i = parting ? 0 : d;
    const int lane = parting ? d : s.live[i].lane;
    row = first_row + i;
    const T* log_p = log_probs_->row(row).data();
    const double u = greedy ? 0.0
                            : sampling_uniform(static_cast<uint64_t>(options_.sampling_seed), s.key,
                                               static_cast<uint64_t>(lane), static_cast<uint64_t>(s.steps));
    const int k = greedy ? sampler_.draw(log_p, columns, 1, 1.0, 1.0, u, excluded)
                         : sampler_.draw(log_p, columns, options_.sampling_topk, options_.sampling_topp,
                                         options_.sampling_temperature, u, excluded);
    heap_.push_back({s.live[i].log_prob + log_p[k], row, words ? words[k] : k, lane});
  }
}

template void BeamSearch<float>::lane_candidates(const Sentence&, int, bool);
template void BeamSearch<double>::lane_candidates(const Sentence&, int, bool);

}  // namespace rnnsearch
