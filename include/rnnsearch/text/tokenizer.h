#pragma once
// The two kinds of text a model reads and writes (docs/design.md §3):
//
// words (models trained with `--tokenizer words`, the default, and every model from before
// the option): the tokenizer of the PyTorch reference, re.findall(r"\w+|[^\w\s]", line.lower()):
//   Unicode lowercasing (optional, on by default), then tokens are maximal runs of word
//   characters (letters, marks, digits/numbers, connector punctuation) or any single other
//   non-space character.  "T-shirt," -> t - shirt ,
//   One exception: "<unk>" (after lowercasing), the unknown-word token translations may
//   contain, stays one token.
// raw (`--tokenizer raw`): the text as it is, cased, cut at white space only, so a token is
//   a word with its punctuation ("T-shirt," stays one); SentencePiece cuts the words into
//   pieces, and the words of a translation, joined by spaces, are its text.
#include <string>
#include <string_view>
#include <vector>

namespace rnnsearch {

enum class TokenizerKind { words, raw };
// "words" or "raw" (throws rnnsearch::Error naming `what` and the choices).
TokenizerKind parse_tokenizer_kind(const std::string& name, const std::string& what = "--tokenizer");
const char* tokenizer_kind_name(TokenizerKind kind);

struct TokenizerOptions {
  TokenizerKind kind = TokenizerKind::words;
  bool lowercase = true;  // words only: raw text keeps its case
};

// `line` must be valid UTF-8 (see is_valid_utf8); a trailing "\n" or "\r\n" is whitespace.
std::vector<std::string> tokenize(std::string_view line, const TokenizerOptions& options = {});

// The text of a translation's tokens, as `translate` prints it: raw-text words joined by
// single spaces; word-level tokens joined by single spaces, or by detokenize() when asked.
std::string output_text(const std::vector<std::string>& tokens, const TokenizerOptions& options, bool detokenize);

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
