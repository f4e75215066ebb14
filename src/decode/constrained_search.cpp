#include "rnnsearch/decode/constrained_search.h"

#include <algorithm>

#include "rnnsearch/decode/beam_search.h"
#include "rnnsearch/text/vocab.h"

namespace rnnsearch {

// ⌊places / banks⌋ each, the remainder to the highest banks; those a bank cannot fill go to
// the others, the highest first; then the candidates, best first, take the places of their bank
// while it has any.
const std::vector<char>& BankAllocation::allocate(const std::vector<int>& banks, int bank_count, int places) {
  available_.assign(bank_count, 0);
  for (int bank : banks) ++available_[bank];
  quota_.assign(bank_count, places / bank_count);
  for (int b = bank_count - places % bank_count; b < bank_count; ++b) ++quota_[b];
  int spare = 0;
  for (int b = 0; b < bank_count; ++b)
    if (quota_[b] > available_[b]) {
      spare += quota_[b] - available_[b];
      quota_[b] = available_[b];
    }
  for (bool given = true; spare > 0 && given;) {
    given = false;
    for (int b = bank_count - 1; b >= 0 && spare > 0; --b)
      if (quota_[b] < available_[b]) {
        ++quota_[b];
        --spare;
        given = true;
      }
  }
  taken_.assign(banks.size(), 0);
  for (size_t k = 0; k < banks.size(); ++k)
    if (quota_[banks[k]] > 0) {
      --quota_[banks[k]];
      taken_[k] = 1;
    }
  return taken_;
}

// The pool of candidates is the best `count` (as without constraints), each row's best token and
// the tokens that take its constraints forward, each (row, word) once, best first; each takes a
// place of its bank (its met count) as BankAllocation shares them.
template <class T>
void BeamSearch<T>::constrained_candidates(const Sentence& s, int first_row, size_t count, bool word_start) {
  select_candidates(s, first_row, count, word_start);
  pool_.assign(heap_.begin(), heap_.end());
  const int columns = static_cast<int>(log_probs_->cols());
  const int* words = shortlist_ ? shortlist_->data() : nullptr;
  const auto column_of = [&](int w) {  // −1: not in the shortlist
    if (!words) return w;
    const auto found = std::lower_bound(shortlist_->begin(), shortlist_->end(), w);
    return found != shortlist_->end() && *found == w ? static_cast<int>(found - shortlist_->begin()) : -1;
  };
  const TokenFilter proposable{word_join_, blocked_, word_start};
  for (size_t i = 0; i < s.live.size(); ++i) {
    const int row = first_row + static_cast<int>(i);
    const T* log_p = log_probs_->row(row).data();
    const T base = s.live[i].log_prob;
    const int best = sampler_.draw(log_p, columns, 1, 1.0, 1.0, 0.0,
                                   [&](int k) { return !proposable(row, words ? words[k] : k); });
    pool_.push_back({base + log_p[best], row, words ? words[best] : best});
    advancing_.clear();
    advancing_tokens(s.constraints, s.live[i].constraint, advancing_);
    for (int w : advancing_) {
      const int k = column_of(w);
      if (k >= 0 && proposable(row, w)) pool_.push_back({base + log_p[k], row, w});
    }
  }
  // ranked (ranks_before), each (row, word) once
  std::sort(pool_.begin(), pool_.end(), ranks_before<T>);
  pool_.erase(std::unique(pool_.begin(), pool_.end(),
                          [](const Candidate& a, const Candidate& b) { return a.row == b.row && a.word == b.word; }),
              pool_.end());
  banks_.clear();
  for (const Candidate& c : pool_) {
    const Live& h = s.live[c.row - first_row];
    banks_.push_back(c.word == Vocab::kEos
                         ? met_tokens(s.constraints, h.constraint)
                         : met_tokens(s.constraints, advance_constraints(s.constraints, h.constraint, c.word, word_join_)));
  }
  const std::vector<char>& taken = allocation_.allocate(banks_, s.constraints.tokens() + 1, static_cast<int>(count));
  heap_.clear();
  for (size_t k = 0; k < pool_.size(); ++k)
    if (taken[k]) heap_.push_back(pool_[k]);
}

// </s> only after a hypothesis that holds every phrase.
template <class T>
void BeamSearch<T>::block_incomplete(const Sentence& s, int first_row) {
  for (size_t i = 0; i < s.live.size(); ++i)
    if (!all_complete(s.constraints, s.live[i].constraint)) blocked_.add(first_row + static_cast<int>(i), Vocab::kEos);
}

template void BeamSearch<float>::constrained_candidates(const Sentence&, int, size_t, bool);
template void BeamSearch<double>::constrained_candidates(const Sentence&, int, size_t, bool);
template void BeamSearch<float>::block_incomplete(const Sentence&, int);
template void BeamSearch<double>::block_incomplete(const Sentence&, int);

}  // namespace rnnsearch
