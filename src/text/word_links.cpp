#include "rnnsearch/text/word_links.h"

#include <algorithm>
#include <string>
#include <utility>

#include "rnnsearch/error.h"

namespace rnnsearch {
std::vector<int> piece_links(const std::vector<WordLink>& word_links, const std::vector<int>& src_word_of_piece,
                             int src_words, const std::vector<int>& tgt_word_of_piece, int tgt_words) {
  std::vector<std::pair<int, int>> pieces;
  for (const auto& [source, target] : word_links) {
    if (source >= src_words || target >= tgt_words)
      throw Error("link " + std::to_string(source) + "-" + std::to_string(target) + " is outside the sentence (" +
                  std::to_string(src_words) + " source and " + std::to_string(tgt_words) + " target words)");
    for (size_t i = 0; i < tgt_word_of_piece.size(); ++i)
      if (tgt_word_of_piece[i] == target)
        for (size_t j = 0; j < src_word_of_piece.size(); ++j)
          if (src_word_of_piece[j] == source) pieces.emplace_back(static_cast<int>(j), static_cast<int>(i));
  }
  std::sort(pieces.begin(), pieces.end());
  pieces.erase(std::unique(pieces.begin(), pieces.end()), pieces.end());
  std::vector<int> flat;
  flat.reserve(2 * pieces.size());
  for (const auto& [j, i] : pieces) {
    flat.push_back(j);
    flat.push_back(i);
  }
  return flat;
}

}  // namespace rnnsearch
