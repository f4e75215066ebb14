#pragma once
// Tokenizer of docs/design.md §3, the same as the PyTorch reference's
// re.findall(r"\w+|[^\w\s]", line.lower()):
//   Unicode lowercasing (optional, on by default), then tokens are maximal runs of word
//   characters (letters, marks, digits/numbers, connector punctuation) or any single other
//   non-space character.  "T-shirt," -> t - shirt ,
//   One exception: "<unk>" (after lowercasing), the unknown-word token translations may
//   contain, stays one token.
#include <string>
#include <string_view>
#include <vector>

namespace rnnsearch {

struct TokenizerOptions {
  bool lowercase = true;
};

// `line` must be valid UTF-8 (see is_valid_utf8); a trailing "\n" or "\r\n" is whitespace.
std::vector<std::string> tokenize(std::string_view line, const TokenizerOptions& options = {});

// Joins tokens back into readable text: one space between tokens except before closing
// punctuation (. , ; : ! ? ) ] } ...), after opening brackets and around hyphens/apostrophes
// that the tokenizer split off a word ("t - shirt" -> "t-shirt", "l ' homme" -> "l'homme").
std::string detokenize(const std::vector<std::string>& tokens);

// Tokens separated by single spaces: tokenized text, the form `rnnsearch bleu` reads.
std::string join_tokens(const std::vector<std::string>& tokens);

// Is `text` well-formed UTF-8 as Unicode Table 3-7 defines it: no overlong forms, no
// surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no truncated sequences or stray
// continuation bytes? Noncharacters (U+FFFE, U+FDD0, ...) and NUL are well-formed.
bool is_valid_utf8(std::string_view text);

}  // namespace rnnsearch
