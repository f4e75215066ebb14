#include "rnnsearch/decode/constraints.h"

#include <algorithm>

#include "rnnsearch/text/subwords.h"

namespace rnnsearch {

int PhraseConstraints::tokens() const {
  int total = 0;
  for (const std::vector<int>& phrase : include) total += static_cast<int>(phrase.size());
  return total;
}

namespace {

// The largest k ≤ m such that p[0..k) is what p[0..m) followed by w ends with.
int restart(const std::vector<int>& p, int m, int w) {
  for (int k = m; k > 0; --k) {
    // p[0..k) against the last k of (p[0..m), w): p[m − k + 1 .. m) and w
    bool same = p[k - 1] == w;
    for (int i = 0; same && i + 1 < k; ++i) same = p[i] == p[m - k + 1 + i];
    if (same) return k;
  }
  return 0;
}

}  // namespace

ConstraintState advance_constraints(const PhraseConstraints& c, const ConstraintState& state, int token,
                                    const std::vector<char>& joins) {
  ConstraintState next = state;
  next.completed = -1;
  if (state.completed >= 0 && !joins.empty()) {
    if (joins[token] == kLetter)  // "Hund" + "e": not the phrase
      next.complete &= ~(uint64_t{1} << state.completed);
    else if (joins[token] == kOther)  // "Hund" + "-": whole unless a letter follows
      next.completed = state.completed;
  }
  if (next.phrase >= 0) {
    const std::vector<int>& p = c.include[next.phrase];
    next.matched = next.matched < static_cast<int>(p.size()) && p[next.matched] == token
                       ? next.matched + 1
                       : restart(p, next.matched, token);
    if (next.matched == 0) next.phrase = -1;
  }
  if (next.phrase < 0)
    for (size_t i = 0; i < c.include.size(); ++i)
      if (!(next.complete >> i & 1) && c.include[i].front() == token) {
        next.phrase = static_cast<int>(i);
        next.matched = 1;
        break;
      }
  if (next.phrase >= 0 && next.matched == static_cast<int>(c.include[next.phrase].size())) {
    next.complete |= uint64_t{1} << next.phrase;
    next.completed = next.phrase;
    next.phrase = -1;
    next.matched = 0;
  }
  return next;
}

int met_tokens(const PhraseConstraints& c, const ConstraintState& state) {
  int met = state.matched;
  for (size_t i = 0; i < c.include.size(); ++i)
    if (state.complete >> i & 1) met += static_cast<int>(c.include[i].size());
  return met;
}

bool all_complete(const PhraseConstraints& c, const ConstraintState& state) {
  return c.include.empty() || state.complete == (c.include.size() == 64 ? ~uint64_t{0} : (uint64_t{1} << c.include.size()) - 1);
}

void advancing_tokens(const PhraseConstraints& c, const ConstraintState& state, std::vector<int>& tokens) {
  if (state.phrase >= 0) {
    tokens.push_back(c.include[state.phrase][state.matched]);
    return;
  }
  for (size_t i = 0; i < c.include.size(); ++i)
    if (!(state.complete >> i & 1)) tokens.push_back(c.include[i].front());
}

}  // namespace rnnsearch
