#pragma once
// The beam search's selection (beam_search.h): of one sentence's rows of a decoder step, the best
// candidates (h, w) by σ_h + log p(w | h), among the tokens a row may propose.
#include <cstddef>
#include <vector>

#include "rnnsearch/decode/avoided_phrases.h"
#include "rnnsearch/kernels/tensor.h"
#include "rnnsearch/text/vocab.h"

namespace rnnsearch {

// Token `word` after the hypothesis of decoder row `row`, with log-probability log_prob so far.
template <class T>
struct BeamCandidate {
  T log_prob;
  int row, word;
  int lane = -1;  // sampling and alternatives: the sample or alternative it goes on (BeamSearch)
};

// The order of candidates: best first; ties: row, then word.
template <class T>
bool ranks_before(const BeamCandidate<T>& a, const BeamCandidate<T>& b) {
  if (a.log_prob != b.log_prob) return a.log_prob > b.log_prob;
  return a.row != b.row ? a.row < b.row : a.word < b.word;
}

// Which tokens a row may propose: never <pad> or <s> (never training targets); with word_start
// (the token right after a subword model's target prefix), only tokens that begin a word; none
// that `blocked` holds.
struct TokenFilter {
  const std::vector<char>& joins;  // by target id, how it joins the word before it (set_word_pieces)
  const BlockedTokens& blocked;
  bool word_start;
  bool operator()(int row, int w) const {
    return w != Vocab::kPad && w != Vocab::kBos && !(word_start && joins[w]) && !blocked(row, w, joins);
  }
};

// The best `count` candidates of rows first_row .. first_row + bases.size() − 1 of log_probs
// (bases[i]: σ of row first_row + i), in `heap`, ranked (ranks_before). Column k of log_probs is
// word k, or the shortlist's k-th word (shortlist: nullptr, or the words increasing).
template <class T>
void top_candidates(const Mat<T>& log_probs, const std::vector<int>* shortlist, int first_row,
                    const std::vector<T>& bases, size_t count, const TokenFilter& proposable,
                    std::vector<BeamCandidate<T>>& heap);

}  // namespace rnnsearch
