#include "rnnsearch/metrics/sacre_tokenizers.h"

#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <cstdint>

#include "rnnsearch/error.h"
#include "rnnsearch/text/tokenizer.h"

namespace rnnsearch {
namespace {

void append_utf8(std::string& out, char32_t c) {
  char bytes[U8_MAX_LENGTH];
  int32_t length = 0;
  U8_APPEND_UNSAFE(bytes, length, static_cast<UChar32>(c));
  out.append(bytes, static_cast<size_t>(length));
}

// The tokens of a code-point string split on Python whitespace, joined by single spaces:
// what ' '.join(text.split()) gives.
std::string join_python_words(std::u32string_view text) {
  std::string result;
  bool in_word = false;
  for (char32_t c : text) {
    if (is_python_space(c)) {
      in_word = false;
      continue;
    }
    if (!in_word && !result.empty()) result += ' ';
    in_word = true;
    append_utf8(result, c);
  }
  return result;
}

bool is_ascii_digit(char32_t c) { return c >= U'0' && c <= U'9'; }
bool is_period_or_comma(char32_t c) { return c == U'.' || c == U','; }

bool in_general_category(char32_t c, uint32_t mask) {
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & mask) != 0;
}
bool is_punctuation(char32_t c) { return in_general_category(c, U_GC_P_MASK); }  // \p{P}
bool is_symbol(char32_t c) { return in_general_category(c, U_GC_S_MASK); }       // \p{S}
bool is_not_number(char32_t c) { return !in_general_category(c, U_GC_N_MASK); }  // \P{N}

// 13a's and tercom's first rule: ASCII punctuation and symbols other than ' , - . (and the
// space itself, which the padding it adds turns into more whitespace).
bool is_13a_separated(char32_t c) {
  return (c >= U'{' && c <= U'~') || (c >= U'[' && c <= U'`') || (c >= U' ' && c <= U'&') ||
         (c >= U'(' && c <= U'+') || (c >= U':' && c <= U'@') || c == U'/';
}

// Every character for which `matches` holds gets a space on each side: "(x)" -> " ( x ) ".
template <class Predicate>
std::u32string space_around(std::u32string_view text, Predicate matches) {
  std::u32string result;
  result.reserve(text.size() + text.size() / 2);
  for (char32_t c : text) {
    if (matches(c)) {
      result += U' ';
      result += c;
      result += U' ';
    } else {
      result += c;
    }
  }
  return result;
}

// Where a pair splits: "ab" -> "a b " (after the first and the second character) or " a b"
// (before each), the two replacement shapes sacreBLEU's pair rules use.
enum class PairSplit { after_each, before_each };

// One left-to-right pass of a two-character rule with re.sub's semantics: at each position,
// if `first` holds for this character and `second` for the next, both are rewritten and the
// scan resumes after them; otherwise the character is copied and the scan moves on by one.
template <class First, class Second>
std::u32string split_pairs(std::u32string_view text, First first, Second second, PairSplit split) {
  std::u32string result;
  result.reserve(text.size() + text.size() / 2);
  for (size_t i = 0; i < text.size();) {
    if (i + 1 < text.size() && first(text[i]) && second(text[i + 1])) {
      if (split == PairSplit::after_each) {
        result += text[i];
        result += U' ';
        result += text[i + 1];
        result += U' ';
      } else {
        result += U' ';
        result += text[i];
        result += U' ';
        result += text[i + 1];
      }
      i += 2;
    } else {
      result += text[i++];
    }
  }
  return result;
}

// str.replace: every non-overlapping occurrence, left to right.
void replace_all(std::u32string& text, std::u32string_view from, std::u32string_view to) {
  if (text.find(from) == std::u32string::npos) return;
  std::u32string result;
  size_t start = 0;
  for (size_t at; (at = text.find(from, start)) != std::u32string::npos; start = at + from.size()) {
    result.append(text, start, at - start);
    result += to;
  }
  result.append(text, start, std::u32string::npos);
  text = std::move(result);
}

void unescape_xml(std::u32string& text) {
  if (text.find(U'&') == std::u32string::npos) return;
  replace_all(text, U"&quot;", U"\"");
  replace_all(text, U"&amp;", U"&");
  replace_all(text, U"&lt;", U"<");
  replace_all(text, U"&gt;", U">");
}

// The rules 13a and tercom's normalisation share after their first one: "." and "," split off
// unless between digits, "-" split off after a digit.
std::u32string split_periods_commas_dashes(std::u32string_view text) {
  auto not_digit = [](char32_t c) { return !is_ascii_digit(c); };
  std::u32string result = split_pairs(text, not_digit, is_period_or_comma, PairSplit::after_each);
  result = split_pairs(result, is_period_or_comma, not_digit, PairSplit::before_each);
  return split_pairs(result, is_ascii_digit, [](char32_t c) { return c == U'-'; }, PairSplit::after_each);
}

// The CJK ranges tercom splits into single characters (with asian_support).
bool is_cjk_character(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||  // unified ideographs, ext. A
         (c >= 0x31C0 && c <= 0x31EF) || (c >= 0x2E80 && c <= 0x2EFF) ||  // strokes, radicals supplement
         (c >= 0x3300 && c <= 0x33FF) || (c >= 0xF900 && c <= 0xFAFF) ||  // compatibility, its ideographs
         (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0x3200 && c <= 0x3F22);    // compatibility forms, enclosed ...
}

bool is_cjk_punctuation(char32_t c) {
  return c == 0x3001 || c == 0x3002 || (c >= 0x3008 && c <= 0x3011) || (c >= 0x3014 && c <= 0x301F) ||
         (c >= 0xFF61 && c <= 0xFF65) || c == 0x30FB;
}

bool is_full_width_punctuation(char32_t c) {
  switch (c) {
    case 0xFF0E: case 0xFF0C: case 0xFF1F: case 0xFF1A: case 0xFF1B: case 0xFF01: case 0xFF02: case 0xFF08:
    case 0xFF09:
      return true;
    default:
      return false;
  }
}

bool is_tercom_punctuation(char32_t c) { return std::u32string_view(U".,?:;!\"()").find(c) != std::u32string_view::npos; }

template <class Predicate>
void remove_if(std::u32string& text, Predicate matches) {
  std::u32string kept;
  for (char32_t c : text)
    if (!matches(c)) kept += c;
  text = std::move(kept);
}

}  // namespace

std::u32string code_points(std::string_view text) {
  std::u32string result;
  result.reserve(text.size());
  const int32_t size = static_cast<int32_t>(text.size());
  for (int32_t i = 0; i < size;) {
    UChar32 c;
    U8_NEXT_OR_FFFD(text.data(), i, size, c);
    result.push_back(static_cast<char32_t>(c));
  }
  return result;
}

std::string utf8(std::u32string_view text) {
  std::string result;
  result.reserve(text.size());
  for (char32_t c : text) append_utf8(result, c);
  return result;
}

bool is_python_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::vector<std::string> split_python_whitespace(std::string_view text) {
  std::vector<std::string> words;
  const int32_t size = static_cast<int32_t>(text.size());
  int32_t word_start = -1;
  for (int32_t i = 0; i < size;) {
    const int32_t start = i;
    UChar32 c;
    U8_NEXT_OR_FFFD(text.data(), i, size, c);
    if (is_python_space(static_cast<char32_t>(c))) {
      if (word_start >= 0) words.emplace_back(text.substr(word_start, start - word_start));
      word_start = -1;
    } else if (word_start < 0) {
      word_start = start;
    }
  }
  if (word_start >= 0) words.emplace_back(text.substr(word_start));
  return words;
}

std::string_view rstrip_python(std::string_view text) {
  int32_t end = static_cast<int32_t>(text.size());
  while (end > 0) {
    int32_t before = end;
    UChar32 c;
    U8_PREV_OR_FFFD(text.data(), 0, before, c);
    if (!is_python_space(static_cast<char32_t>(c))) break;
    end = before;
  }
  return text.substr(0, static_cast<size_t>(end));
}

std::string lowercase_full(std::string_view text) {
  icu::UnicodeString unicode =
      icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  std::string result;
  unicode.toLower(icu::Locale::getRoot()).toUTF8String(result);
  return result;
}

BleuTokenizer parse_bleu_tokenizer(const std::string& name) {
  for (BleuTokenizer t : {BleuTokenizer::mteval_13a, BleuTokenizer::intl, BleuTokenizer::character,
                          BleuTokenizer::none, BleuTokenizer::multi30k})
    if (name == bleu_tokenizer_name(t)) return t;
  throw Error("--tokenize: unknown tokenizer '" + name + "' (expected 13a, intl, char, none or multi30k)");
}

const char* bleu_tokenizer_name(BleuTokenizer tokenizer) {
  switch (tokenizer) {
    case BleuTokenizer::mteval_13a: return "13a";
    case BleuTokenizer::intl: return "intl";
    case BleuTokenizer::character: return "char";
    case BleuTokenizer::none: return "none";
    case BleuTokenizer::multi30k: return "multi30k";
  }
  return "?";
}

std::string tokenize_13a(std::string_view line) {
  std::u32string text = code_points(line);
  replace_all(text, U"<skipped>", U"");
  replace_all(text, U"-\n", U"");
  replace_all(text, U"\n", U" ");
  unescape_xml(text);
  text = space_around(U" " + text + U" ", is_13a_separated);
  return join_python_words(split_periods_commas_dashes(text));
}

std::string tokenize_intl(std::string_view line) {
  std::u32string text = split_pairs(code_points(line), is_not_number, is_punctuation, PairSplit::after_each);
  text = split_pairs(text, is_punctuation, is_not_number, PairSplit::before_each);
  return join_python_words(space_around(text, is_symbol));
}

// Every code point, spaces included, with a space after each but the last: "a b" -> "a   b".
std::string tokenize_char(std::string_view line) {
  std::string result;
  for (char32_t c : code_points(line)) {
    if (!result.empty()) result += ' ';
    append_utf8(result, c);
  }
  return result;
}

std::vector<std::string> bleu_tokens(std::string_view line, BleuTokenizer tokenizer) {
  switch (tokenizer) {
    case BleuTokenizer::mteval_13a: return split_python_whitespace(tokenize_13a(line));
    case BleuTokenizer::intl: return split_python_whitespace(tokenize_intl(line));
    case BleuTokenizer::character: return split_python_whitespace(tokenize_char(line));
    case BleuTokenizer::none: return split_python_whitespace(line);
    case BleuTokenizer::multi30k: return tokenize(line, TokenizerOptions{TokenizerKind::words, /*lowercase=*/true});
  }
  return {};
}

std::string tokenize_tercom(std::string_view line, const TercomOptions& options) {
  if (line.empty()) return "";
  std::u32string text = code_points(options.case_sensitive ? std::string(line) : lowercase_full(line));
  if (options.normalized) {
    replace_all(text, U"\n-", U"");
    replace_all(text, U"\n", U" ");
    unescape_xml(text);
    text = space_around(U" " + text + U" ", is_13a_separated);
    replace_all(text, U"'s ", U" 's ");  // possessives (the "'s" at the very end is padded by now)
    text = split_periods_commas_dashes(text);
    if (options.asian_support)
      text = space_around(text, [](char32_t c) {
        return is_cjk_character(c) || is_cjk_punctuation(c) || is_full_width_punctuation(c);
      });
  }
  if (options.no_punct) {
    remove_if(text, is_tercom_punctuation);
    if (options.asian_support)
      remove_if(text, [](char32_t c) { return is_cjk_punctuation(c) || is_full_width_punctuation(c); });
  }
  return join_python_words(text);
}

}  // namespace rnnsearch
