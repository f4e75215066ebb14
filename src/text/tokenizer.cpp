#include "rnnsearch/text/tokenizer.h"

#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <cstdint>
#include <initializer_list>

namespace rnnsearch {
namespace {

// Word characters of DESIGN.md §3: letters, marks, numbers, connector punctuation. Python's
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

}  // namespace

std::vector<std::string> tokenize(std::string_view line, const TokenizerOptions& options) {
  icu::UnicodeString text =
      icu::UnicodeString::fromUTF8(icu::StringPiece(line.data(), static_cast<int32_t>(line.size())));
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

// Well-formed UTF-8 as Unicode Table 3-7 defines it: no overlong forms, no surrogates
// (U+D800..U+DFFF), nothing above U+10FFFF, no truncated sequences.
bool is_valid_utf8(std::string_view text) {
  size_t i = 0;
  const size_t n = text.size();
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  auto continuation = [&](size_t k, unsigned char lo = 0x80, unsigned char hi = 0xBF) {
    return k < n && byte(k) >= lo && byte(k) <= hi;
  };
  while (i < n) {
    unsigned char b = byte(i);
    if (b < 0x80) {
      i += 1;
    } else if (b >= 0xC2 && b <= 0xDF) {
      if (!continuation(i + 1)) return false;
      i += 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      // E0 needs A0.. (else overlong); ED needs ..9F (else a surrogate).
      unsigned char lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
      if (!continuation(i + 1, lo, hi) || !continuation(i + 2)) return false;
      i += 3;
    } else if (b >= 0xF0 && b <= 0xF4) {
      // F0 needs 90.. (else overlong); F4 needs ..8F (else above U+10FFFF).
      unsigned char lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
      if (!continuation(i + 1, lo, hi) || !continuation(i + 2) || !continuation(i + 3))
        return false;
      i += 4;
    } else {
      return false;  // a stray continuation byte, C0/C1 (overlong) or F5..FF
    }
  }
  return true;
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
