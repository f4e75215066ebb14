#include "rnnsearch/text/tokenizer.h"

#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <cstdint>
#include <initializer_list>

#include "rnnsearch/error.h"

namespace rnnsearch {
namespace {

// Word characters of docs/design.md §3: letters, marks, numbers, connector punctuation. Python's
// \w (the reference) leaves out marks and connectors other than '_'; neither occurs in
// Multi30k, where both tokenizers agree on every line.
bool is_word_char(UChar32 c) {
  return (U_GET_GC_MASK(c) & (U_GC_L_MASK | U_GC_M_MASK | U_GC_N_MASK | U_GC_PC_MASK)) != 0;
}

// The first code point of a UTF-8 token; U_SENTINEL (in no character class) for an empty
// or ill-formed one.
UChar32 first_code_point(const std::string& token) {
  if (token.empty()) return U_SENTINEL;
  int32_t i = 0;
  UChar32 c;
  U8_NEXT(token.data(), i, static_cast<int32_t>(token.size()), c);
  return c;
}

// A token is either a run of word characters or a single other character, so its first
// code point tells which kind it is.
bool is_word_token(const std::string& token) { return is_word_char(first_code_point(token)); }
bool is_number_token(const std::string& token) { return u_isdigit(first_code_point(token)); }

bool is_one_of(const std::string& token, std::initializer_list<const char*> set) {
  for (const char* s : set)
    if (token == s) return true;
  return false;
}

bool is_closing(const std::string& token) {
  return is_one_of(token, {".", ",", ";", ":", "!", "?", ")", "]", "}", "%", "…", "»", "”"});
}

bool is_opening(const std::string& token) {
  return is_one_of(token, {"(", "[", "{", "«", "“", "¿", "¡"});
}

// Is tokens[m] a hyphen or apostrophe inside a word ("t - shirt", "l ' homme"), or a
// separator inside a number ("3 . 5", "1 , 000")? The tokenizer split these apart.
bool connects(const std::vector<std::string>& tokens, size_t m) {
  if (m == 0 || m + 1 >= tokens.size()) return false;
  const std::string& left = tokens[m - 1];
  const std::string& right = tokens[m + 1];
  return (is_one_of(tokens[m], {"-", "'", "’"}) && is_word_token(left) && is_word_token(right)) ||
         (is_one_of(tokens[m], {".", ",", ":"}) && is_number_token(left) && is_number_token(right));
}

// Is there no space between tokens[k - 1] and tokens[k]?
bool glued(const std::vector<std::string>& tokens, size_t k) {
  return is_closing(tokens[k]) || is_opening(tokens[k - 1]) || connects(tokens, k) ||
         connects(tokens, k - 1);
}

// The unknown-word token that translations may contain: kept whole so that scoring or
// re-translating a translation reads the sentence that was written, not "< unk >".
const icu::UnicodeString& unk_token() {
  static const icu::UnicodeString token = icu::UnicodeString::fromUTF8("<unk>");
  return token;
}

// Raw text: the runs of characters between Unicode White_Space, as they are.
std::vector<std::string> split_at_white_space(const icu::UnicodeString& text) {
  std::vector<std::string> words;
  int32_t start = -1;  // start of the current word, -1 between words
  for (int32_t i = 0; i < text.length(); i = text.moveIndex32(i, 1)) {
    const bool space = u_isUWhiteSpace(text.char32At(i));
    if (!space && start < 0) start = i;
    if (space && start >= 0) {
      text.tempSubStringBetween(start, i).toUTF8String(words.emplace_back());
      start = -1;
    }
  }
  if (start >= 0) text.tempSubStringBetween(start, text.length()).toUTF8String(words.emplace_back());
  return words;
}

}  // namespace

TokenizerKind parse_tokenizer_kind(const std::string& name, const std::string& what) {
  if (name == "words") return TokenizerKind::words;
  if (name == "raw") return TokenizerKind::raw;
  throw Error(what + " must be words or raw, not '" + name + "'");
}

const char* tokenizer_kind_name(TokenizerKind kind) { return kind == TokenizerKind::raw ? "raw" : "words"; }

std::vector<std::string> tokenize(std::string_view line, const TokenizerOptions& options) {
  icu::UnicodeString text =
      icu::UnicodeString::fromUTF8(icu::StringPiece(line.data(), static_cast<int32_t>(line.size())));
  if (options.kind == TokenizerKind::raw) return split_at_white_space(text);
  if (options.lowercase) text.toLower(icu::Locale::getRoot());

  std::vector<std::string> tokens;
  auto emit = [&](int32_t start, int32_t end) {
    text.tempSubStringBetween(start, end).toUTF8String(tokens.emplace_back());
  };
  int32_t word_start = -1;  // start of the current run of word characters, -1 outside one
  for (int32_t i = 0; i < text.length();) {
    UChar32 c = text.char32At(i);
    int32_t next = i + U16_LENGTH(c);
    if (is_word_char(c)) {
      if (word_start < 0) word_start = i;
    } else {
      if (word_start >= 0) emit(word_start, i);
      word_start = -1;
      if (text.compare(i, unk_token().length(), unk_token()) == 0) next = i + unk_token().length();
      if (!u_isUWhiteSpace(c)) emit(i, next);
    }
    i = next;
  }
  if (word_start >= 0) emit(word_start, text.length());
  return tokens;
}

std::string detokenize(const std::vector<std::string>& tokens) {
  std::string text;
  for (size_t k = 0; k < tokens.size(); ++k) {
    if (k > 0 && !glued(tokens, k)) text += ' ';
    text += tokens[k];
  }
  return text;
}

// U8_NEXT accepts exactly the well-formed sequences of Unicode Table 3-7 and yields a
// negative code point for anything else (see the header). It is a macro, so a size_t index
// serves texts of any length.
bool is_valid_utf8(std::string_view text) {
  const size_t size = text.size();
  for (size_t i = 0; i < size;) {
    UChar32 c;
    U8_NEXT(text.data(), i, size, c);
    if (c < 0) return false;
  }
  return true;
}

std::string output_text(const std::vector<std::string>& tokens, const TokenizerOptions& options, bool detokenize_tokens) {
  return detokenize_tokens && options.kind == TokenizerKind::words ? detokenize(tokens) : join_tokens(tokens);
}

std::string join_tokens(const std::vector<std::string>& tokens) {
  std::string text;
  for (const std::string& token : tokens) {
    if (!text.empty()) text += ' ';
    text += token;
  }
  return text;
}

}  // namespace rnnsearch
