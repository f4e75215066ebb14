#include "rnnsearch/decode/avoided_phrases.h"

#include <algorithm>

#include "rnnsearch/text/vocab.h"

namespace rnnsearch {

void AvoidedPhrases::set(const std::vector<std::vector<int>>& phrases, const std::vector<std::string>* pieces) {
  phrases_ = phrases;
  text_.clear();
  ends_.clear();
  if (!pieces) return;
  for (const std::vector<int>& phrase : phrases) {
    std::string text;
    for (int w : phrase) text += (*pieces)[w];
    for (int w = Vocab::kEos + 1; w < static_cast<int>(pieces->size()); ++w) {
      const std::string& piece = (*pieces)[w];
      if (!piece.empty() && piece.size() <= text.size() &&
          text.compare(text.size() - piece.size(), piece.size(), piece) == 0)
        ends_.push_back({static_cast<int>(text_.size()), w});
    }
    text_.push_back(std::move(text));
  }
}

namespace {

// Does the text of the path to `node` end with text[0 .. end)? (Pieces never hold a "▁" but at
// their start, so a text that starts with one starts at a piece.)
bool ends_with_text(const std::vector<TokenNode>& nodes, int node, const std::vector<std::string>& pieces,
                    const std::string& text, size_t end) {
  for (; end > 0 && node >= 0 && nodes[node].token >= 0; node = nodes[node].parent) {
    const std::string& piece = pieces[nodes[node].token];
    if (piece.size() > end || text.compare(end - piece.size(), piece.size(), piece) != 0) return false;
    end -= piece.size();
  }
  return end == 0;
}

}  // namespace

void AvoidedPhrases::block(const std::vector<TokenNode>& nodes, int node, int row, bool chosen, bool last,
                           const std::vector<std::string>* pieces, BlockedTokens& blocked) const {
  if (pieces) {
    if (chosen && std::any_of(text_.begin(), text_.end(), [&](const std::string& text) {
          return ends_with_text(nodes, node, *pieces, text, text.size());
        }))
      blocked.add(row, BlockedTokens::kWordEnd);
    if (last)
      for (const auto& [phrase, w] : ends_) {
        const std::string& text = text_[phrase];
        if (ends_with_text(nodes, node, *pieces, text, text.size() - (*pieces)[w].size())) blocked.add(row, w);
      }
    return;
  }
  for (const std::vector<int>& phrase : phrases_) {
    int at = node;
    bool ends = true;
    for (int k = static_cast<int>(phrase.size()) - 2; k >= 0 && ends; --k) {
      ends = at >= 0 && nodes[at].token == phrase[k];
      if (ends) at = nodes[at].parent;
    }
    if (ends) blocked.add(row, phrase.back());
  }
}

}  // namespace rnnsearch
