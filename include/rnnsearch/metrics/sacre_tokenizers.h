#pragma once
// The text handling of sacreBLEU 2.x (docs/metrics.md), reimplemented so that `rnnsearch bleu`
// gives its figures: Python's whitespace and lowercasing, and the tokenizers its BLEU and TER
// run before counting. Every function takes and returns UTF-8 and works on code points.
//
// BLEU tokenizers (the text is lowercased first with --lowercase; a tokenizer's output is
// split on whitespace into the tokens BLEU counts):
//   13a   mteval-v13a.pl's: "<skipped>" removed, &quot; &amp; &lt; &gt; unescaped, the text
//         padded with a space, then, in this order,
//           every ASCII symbol or punctuation mark except ' , - . gets spaces around it;
//           "." or "," after a character that is not a digit 0-9 gets split off: "x." -> "x . ";
//           "." or "," before a non-digit likewise: ".x" -> " . x";
//           "-" after a digit gets split off: "9-" -> "9 - ".
//   intl  mteval-v14.pl's --international-tokenization: Unicode punctuation (\p{P}) after a
//         non-number (\P{N}) is split off, then punctuation before a non-number, then every
//         symbol (\p{S}) gets spaces around it. So "1,000" and "3.5" stay whole.
//   char  every character is a token.
//   none  the text as it is (split on whitespace).
//   multi30k  not sacreBLEU's: rnnsearch's own tokenizer (text/tokenizer.h, docs/design.md §3),
//         which lowercases; the tokenized, lowercased BLEU Multi30k papers report.
// Each pair rule rewrites non-overlapping pairs from left to right, as Python's re.sub does:
// in "a.,b" the pair "a." is rewritten and the "," is next looked at with its right neighbour.
#include <string>
#include <string_view>
#include <vector>

namespace rnnsearch {

// Python's str.isspace(): the 29 code points of Unicode category Zs or bidirectional class
// WS, B or S (U+0009-000D, U+001C-0020, U+0085, U+00A0, U+1680, U+2000-200A, U+2028,
// U+2029, U+202F, U+205F, U+3000).
bool is_python_space(char32_t c);

// Python's str.split() without arguments: maximal runs of non-space code points.
std::vector<std::string> split_python_whitespace(std::string_view text);

// Python's str.rstrip() without arguments: trailing is_python_space code points removed.
std::string_view rstrip_python(std::string_view text);

// UTF-8 <-> code points (Python's str indexes): ill-formed bytes (read_lines lets none
// through) become U+FFFD.
std::u32string code_points(std::string_view text);
std::string utf8(std::u32string_view text);

// Python's str.lower(): the full Unicode lowercase mapping (U+0130 İ -> "i̇"), with Σ as ς
// at the end of a word (ICU's root-locale lowercasing, which does the same).
std::string lowercase_full(std::string_view text);

enum class BleuTokenizer { none, mteval_13a, intl, character, multi30k };

// "13a", "intl", "char", "none", "multi30k" (throws rnnsearch::Error naming the choices).
BleuTokenizer parse_bleu_tokenizer(const std::string& name);
// The name the signature prints: the same words.
const char* bleu_tokenizer_name(BleuTokenizer tokenizer);

// The tokens of one line (already lowercased when asked for, and with trailing whitespace
// removed, as sacreBLEU's BLEU does before tokenizing).
std::vector<std::string> bleu_tokens(std::string_view line, BleuTokenizer tokenizer);

// The tokenizers' text output as sacreBLEU returns it: tokens joined by single spaces (char:
// every character, whitespace included, followed by a space but the last).
std::string tokenize_13a(std::string_view line);
std::string tokenize_intl(std::string_view line);
std::string tokenize_char(std::string_view line);

// TER's tokenizer (tercom's Normalizer, as sacreBLEU's TER runs it). In this order:
//   lowercase unless case_sensitive;
//   normalized: "\n-" removed, "\n" -> " ", &quot; &amp; &lt; &gt; unescaped, the text padded
//     with a space, the 13a rules above with one more before the "."/"," ones: "'s " ->
//     " 's " (possessives);
//     and with asian_support: CJK ideographs, strokes, radicals, compatibility forms and
//     U+3200-3F22 each get spaces around them, as do the CJK and full-width punctuation
//     marks below. (tercom's rules for runs of kana only match at the start of the text,
//     which by then is the padding space: they never apply.)
//   no_punct: the characters . , ? : ; ! " ( ) removed; with asian_support also the CJK
//     punctuation U+3001, U+3002, U+3008-3011, U+3014-301F, U+FF61-FF65, U+30FB and the
//     full-width . , ? : ; ! " ( ) (U+FF0E, FF0C, FF1F, FF1A, FF1B, FF01, FF02, FF08, FF09);
//   whitespace collapsed to single spaces, none at either end.
struct TercomOptions {
  bool normalized = false;
  bool no_punct = false;
  bool asian_support = false;
  bool case_sensitive = false;
};
std::string tokenize_tercom(std::string_view line, const TercomOptions& options);

}  // namespace rnnsearch
