#include "rnnsearch/decode/alternatives.h"

#include <cmath>

#include "rnnsearch/decode/beam_search.h"

namespace rnnsearch {

AlternativeWord alternative_word(const Hypothesis& h) {
  if (h.alternative < 0) return {};
  const bool ends = h.alternative >= static_cast<int>(h.words.size());
  return {h.alternative, ends ? "</s>" : h.words[h.alternative], std::exp(h.alternative_log_prob)};
}

// Right after <s> (or the target prefix) the sentence has one row: its K best tokens
// (select_candidates) start the K alternatives, each keeping its log p; then each lane goes on
// with its best token (lane_candidates).
template <class T>
void BeamSearch<T>::alternative_candidates(Sentence& s, int first_row, bool word_start) {
  if (s.live.size() != 1 || s.live.front().lane >= 0) {
    lane_candidates(s, first_row, word_start);
    return;
  }
  select_candidates(s, first_row, static_cast<size_t>(options_.alternatives), word_start);
  for (size_t k = 0; k < heap_.size(); ++k) {
    heap_[k].lane = static_cast<int>(k);
    s.alternative_log_probs.push_back(heap_[k].log_prob - s.live.front().log_prob);
  }
}

template void BeamSearch<float>::alternative_candidates(Sentence&, int, bool);
template void BeamSearch<double>::alternative_candidates(Sentence&, int, bool);

}  // namespace rnnsearch
