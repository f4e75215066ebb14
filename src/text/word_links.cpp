#include "rnnsearch/text/word_links.h"

#include <algorithm>
#include <charconv>

#include "rnnsearch/error.h"

namespace rnnsearch {
namespace {

// A whole non-negative number, all of `text`.
bool parse_index(std::string_view text, int& value) {
  const char* end = text.data() + text.size();
  const auto [stop, problem] = std::from_chars(text.data(), end, value);
  return !text.empty() && problem == std::errc() && stop == end && value >= 0;
}

}  // namespace

std::vector<std::pair<int, int>> parse_word_links(std::string_view line) {
  std::vector<std::pair<int, int>> links;
  size_t at = 0;
  while (at < line.size()) {
    if (line[at] == ' ' || line[at] == '\t' || line[at] == '\r') {
      ++at;
      continue;
    }
    const size_t stop = std::min(line.find_first_of(" \t\r", at), line.size());
    const std::string_view token = line.substr(at, stop - at);
    const size_t dash = token.find('-');
    int source = 0, target = 0;
    if (dash == std::string_view::npos || !parse_index(token.substr(0, dash), source) ||
        !parse_index(token.substr(dash + 1), target))
      throw Error("'" + std::string(token) + "' is not a link i-j (0-based word positions)");
    links.emplace_back(source, target);
    at = stop;
  }
  return links;
}

std::vector<int> piece_links(const std::vector<std::pair<int, int>>& word_links, const std::vector<int>& src_word_of_piece,
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
