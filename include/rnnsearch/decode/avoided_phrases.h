#pragma once
// Phrases to avoid (translate --avoid; PhraseConstraints::avoid, constraints.h) in the beam
// search (beam_search.h): no hypothesis may hold one, so each step blocks the tokens that would
// complete one (nor are they drawn, in sampling and alternatives; a target prefix's tokens are
// forced regardless). A word-level model: the last token of the phrase after a hypothesis that
// ends with the rest of it. A subword model: after a hypothesis whose text ends with the
// phrase's (its first piece with "▁", so from a word's start; its last token chosen, not a
// prefix's), every token but those that go on with its last word by a letter or digit ("Hund"
// may become "Hunde", not "Hund" or "Hund."), however it was pieced; and at the last step
// before the length limit cuts the text, each token that would end it with the phrase.
#include <string>
#include <utility>
#include <vector>

#include "rnnsearch/text/subwords.h"

namespace rnnsearch {

// The hypotheses of a sentence form a tree of nodes (one per output token) sharing prefixes,
// so extending a hypothesis copies nothing.
struct TokenNode {
  int parent;  // -1: the root (<s>)
  int token;   // -1: the extra attention row of a hypothesis cut at the length limit
};

// The (row, token) pairs a decoder step must not propose.
class BlockedTokens {
 public:
  // As a token: every token that does not go on with the row's word by a letter or digit.
  static constexpr int kWordEnd = -1;
  void clear() { blocked_.clear(); }
  void add(int row, int token) { blocked_.push_back({row, token}); }
  // joins: by target id, how it joins the word before it (text/subwords.h WordJoin).
  bool operator()(int row, int token, const std::vector<char>& joins) const {
    for (const auto& [r, w] : blocked_)
      if (r == row && (w == token || (w == kWordEnd && joins[token] != kLetter))) return true;
    return false;
  }

 private:
  std::vector<std::pair<int, int>> blocked_;
};

// One sentence's phrases to avoid.
class AvoidedPhrases {
 public:
  // phrases: target ids; pieces: by target id, its text (a subword model), or nullptr (a
  // word-level model: phrases are whole as tokens). block() takes the same pieces.
  void set(const std::vector<std::vector<int>>& phrases, const std::vector<std::string>* pieces);
  // Blocks what row `row` must not propose, its hypothesis ending at nodes[node]. chosen: its
  // last token was chosen, not a target prefix's; last: the token proposed is the last the
  // length limit lets in.
  void block(const std::vector<TokenNode>& nodes, int node, int row, bool chosen, bool last,
             const std::vector<std::string>* pieces, BlockedTokens& blocked) const;

 private:
  std::vector<std::vector<int>> phrases_;
  std::vector<std::string> text_;             // subword models: each phrase as the text of its pieces
  std::vector<std::pair<int, int>> ends_;     // (phrase, token): the tokens whose text ends that phrase's
};

}  // namespace rnnsearch
