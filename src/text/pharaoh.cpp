#include "rnnsearch/text/pharaoh.h"

#include <charconv>

#include "rnnsearch/error.h"

namespace rnnsearch {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

// A position: decimal digits only (no sign), within int.
bool parse_position(std::string_view digits, int& value) {
  if (digits.empty() || digits.front() < '0' || digits.front() > '9') return false;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return error == std::errc() && end == digits.data() + digits.size();
}

}  // namespace

std::vector<std::string_view> white_space_tokens(std::string_view text) {
  std::vector<std::string_view> tokens;
  for (size_t at = 0; at < text.size();) {
    if (is_space(text[at])) {
      ++at;
      continue;
    }
    size_t end = at;
    while (end < text.size() && !is_space(text[end])) ++end;
    tokens.push_back(text.substr(at, end - at));
    at = end;
  }
  return tokens;
}

bool parse_word_link(std::string_view token, std::string_view separators, WordLink& link, char* separator) {
  const size_t at = token.find_first_of(separators);
  if (at == std::string_view::npos) return false;
  *separator = token[at];
  return parse_position(token.substr(0, at), link.source) && parse_position(token.substr(at + 1), link.target);
}

std::vector<WordLink> parse_pharaoh_line(std::string_view text) {
  std::vector<WordLink> links;
  for (std::string_view token : white_space_tokens(text)) {
    WordLink link;
    char separator = 0;
    if (!parse_word_link(token, "-", link, &separator))
      throw Error("bad link '" + std::string(token) + "' (expected SOURCE-TARGET, 0-based word positions, as 0-0 1-2)");
    links.push_back(link);
  }
  return links;
}

std::string pharaoh_text(const std::vector<WordLink>& links) {
  std::string text;
  for (const WordLink& link : links) {
    if (!text.empty()) text += ' ';
    text += std::to_string(link.source) + "-" + std::to_string(link.target);
  }
  return text;
}

}  // namespace rnnsearch
