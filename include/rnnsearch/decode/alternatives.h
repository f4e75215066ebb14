#pragma once
// Alternatives instead of search (BeamOptions::alternatives = K, as CTranslate2's
// return_alternatives): the one row after <s> (or the target prefix) gives the K most probable
// next tokens w_1 .. w_K (ties: the lower id first), and each goes on greedily, the best token of
// its own row at every step (the beam search's lanes, beam_search.h). The sentence's hypotheses
// are these K, in the order of their first token, not re-ranked; each carries
// log p(w_k | prefix, x) (Hypothesis::alternative_log_prob).
#include <string>

#include "rnnsearch/decode/hypothesis.h"

namespace rnnsearch {

// A hypothesis of --alternatives as outputs show it: the index of the word where it parts from
// the others (words.size(): it ends there), that word ("</s>" then) and its probability.
struct AlternativeWord {
  int position = -1;  // −1: not an alternative
  std::string word;
  double probability = 0;
};
AlternativeWord alternative_word(const Hypothesis& h);

}  // namespace rnnsearch
