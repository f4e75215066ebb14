#pragma once
// Lexical constraints of one sentence (translate --constraints / --avoid): phrases of target
// tokens that every hypothesis must contain, and phrases that none may contain. The beam search
// (beam_search.h) decodes them by dynamic beam allocation (Post & Vilar 2018).
//
// Positive phrases p_1 .. p_n (C = Σ |p_i| tokens). A hypothesis' state says which phrases it
// has completed and, when it is in the middle of one, how many of its tokens it has matched;
// met = Σ |p_i| of the completed + the tokens matched. Appending token w:
//
//   in phrase p with m tokens matched:  w = p[m] → m + 1 (p is complete at m + 1 = |p|);
//       else the longest start of p that the hypothesis now ends with (p[0..k) = the last k
//       tokens, k ≤ m), or, with none, as below
//   in no phrase:  w = p_i[0] for the first incomplete p_i → in p_i, 1 matched (complete if |p_i| = 1)
//   with subword pieces, a phrase must stand as whole words: a piece that continues the word of
//       a phrase just completed with a letter or digit undoes it, also after pieces of
//       punctuation ("Hund" is not met by "Hunde" or "Hund-Welpe", but is by "Hund." and "Hund ...")
//
// A hypothesis may end (</s>) only when every phrase is complete. Negative phrases: a token that
// would complete one (the hypothesis ends with its first |p| − 1 tokens) is never proposed.
#include <cstdint>
#include <vector>

namespace rnnsearch {

struct PhraseConstraints {
  std::vector<std::vector<int>> include;  // must appear, each as given (at most 64)
  std::vector<std::vector<int>> avoid;    // must not appear
  bool empty() const { return include.empty() && avoid.empty(); }
  int tokens() const;  // C
};

struct ConstraintState {
  uint64_t complete = 0;  // bit i: include[i] appears
  int phrase = -1;        // the phrase being matched, −1: none
  int matched = 0;        // its tokens matched so far
  int completed = -1;     // the phrase the last token completed, −1: none
};

// The state after appending `token`. joins: by target id, how it joins the word before it
// (text/subwords.h WordJoin; empty: a word-level model).
ConstraintState advance_constraints(const PhraseConstraints& constraints, const ConstraintState& state, int token,
                                    const std::vector<char>& joins);
int met_tokens(const PhraseConstraints& constraints, const ConstraintState& state);
bool all_complete(const PhraseConstraints& constraints, const ConstraintState& state);
// The tokens that would take the state forward: the next token of the phrase being matched,
// else the first token of each incomplete phrase (appended to `tokens`).
void advancing_tokens(const PhraseConstraints& constraints, const ConstraintState& state, std::vector<int>& tokens);

}  // namespace rnnsearch
