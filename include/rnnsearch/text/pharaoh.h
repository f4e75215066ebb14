#pragma once
// Word links in Pharaoh text, "0-0 1-2 2-1": SOURCE-TARGET pairs of 0-based word positions
// separated by white space, as fast_align, eflomal and `rnnsearch align` write them, and the
// white-space splitter the words of such links are counted by. The one reader and writer of
// Pharaoh lines (align/links.h sorts and locates them, text/word_links.h maps them to pieces,
// output/alignment.h writes a hard alignment with them). Plain data, no model.
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace rnnsearch {

struct WordLink {
  int source = 0, target = 0;  // 0-based word positions
  friend bool operator<(const WordLink& a, const WordLink& b) {
    return std::tie(a.source, a.target) < std::tie(b.source, b.target);
  }
  friend bool operator==(const WordLink& a, const WordLink& b) { return a.source == b.source && a.target == b.target; }
  friend bool operator!=(const WordLink& a, const WordLink& b) { return !(a == b); }
};

// The white-space separated tokens of a text (ASCII white space: space, \t \n \v \f \r).
std::vector<std::string_view> white_space_tokens(std::string_view text);

// One token "SOURCE<separator>TARGET", positions decimal digits only (no sign), within int,
// for a separator among `separators` (returned in *separator). False if it is not one.
bool parse_word_link(std::string_view token, std::string_view separators, WordLink& link, char* separator);

// One Pharaoh line's links in the line's order, repeats kept; "" and blank lines have none.
// Throws rnnsearch::Error "bad link 'x' (expected SOURCE-TARGET, 0-based word positions, as
// 0-0 1-2)" for the first token that is not one (callers prefix the file and line).
std::vector<WordLink> parse_pharaoh_line(std::string_view text);

// "0-0 1-2 2-1" in the links' order; "" for none.
std::string pharaoh_text(const std::vector<WordLink>& links);

}  // namespace rnnsearch
