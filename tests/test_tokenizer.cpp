#include "rnnsearch/text/tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rnnsearch {
namespace {

using Tokens = std::vector<std::string>;

TEST(Tokenizer, GermanUmlautsAndSharpS) {
  EXPECT_EQ(tokenize("Die Straße ist ÜBER dem Fluß."),
            (Tokens{"die", "straße", "ist", "über", "dem", "fluß", "."}));
  EXPECT_EQ(tokenize("Männer, Frauen und Kühe"), (Tokens{"männer", ",", "frauen", "und", "kühe"}));
}

TEST(Tokenizer, CzechAndFrench) {
  EXPECT_EQ(tokenize("Žena v červeném"), (Tokens{"žena", "v", "červeném"}));
  EXPECT_EQ(tokenize("ŘEKA Ůdolí"), (Tokens{"řeka", "ůdolí"}));
  // Elision: the apostrophe is a token of its own, as in the reference.
  EXPECT_EQ(tokenize("L'homme à l'école"),
            (Tokens{"l", "'", "homme", "à", "l", "'", "école"}));
}

TEST(Tokenizer, NonBreakingSpaceSeparatesTokens) {
  EXPECT_EQ(tokenize("zwei\u00A0Hunde"), (Tokens{"zwei", "hunde"}));
  EXPECT_EQ(tokenize("a\tb\u2003c"), (Tokens{"a", "b", "c"}));
}

TEST(Tokenizer, PunctuationIsOneTokenPerCharacter) {
  EXPECT_EQ(tokenize("wow!!!"), (Tokens{"wow", "!", "!", "!"}));
  EXPECT_EQ(tokenize("T-shirt,"), (Tokens{"t", "-", "shirt", ","}));
  EXPECT_EQ(tokenize("\"Hi\" (yes)"), (Tokens{"\"", "hi", "\"", "(", "yes", ")"}));
  EXPECT_EQ(tokenize("„Ja“…"), (Tokens{"„", "ja", "“", "…"}));
}

// <unk> in a translation stays one token, so score reads the sentence translate wrote.
TEST(Tokenizer, UnknownWordTokenStaysWhole) {
  EXPECT_EQ(tokenize("ein <unk> mit <UNK>."), (Tokens{"ein", "<unk>", "mit", "<unk>", "."}));
  EXPECT_EQ(tokenize("x<unk>y"), (Tokens{"x", "<unk>", "y"}));
  EXPECT_EQ(tokenize("<unknown> <unk"), (Tokens{"<", "unknown", ">", "<", "unk"}));
  EXPECT_EQ(tokenize("<Unk>", TokenizerOptions{TokenizerKind::words, false}), (Tokens{"<", "Unk", ">"}));
}

TEST(Tokenizer, EmptyAndBlankLinesHaveNoTokens) {
  EXPECT_TRUE(tokenize("").empty());
  EXPECT_TRUE(tokenize("  \t \u00A0 ").empty());
  EXPECT_TRUE(tokenize("\r\n").empty());
}

TEST(Tokenizer, LineEndingsAreWhitespace) {
  EXPECT_EQ(tokenize("a dog\r\n"), (Tokens{"a", "dog"}));
  EXPECT_EQ(tokenize("a dog\n"), (Tokens{"a", "dog"}));
}

TEST(Tokenizer, LowercasingCanBeTurnedOff) {
  TokenizerOptions keep_case;
  keep_case.lowercase = false;
  EXPECT_EQ(tokenize("Ein ÜBER-Mann", keep_case), (Tokens{"Ein", "ÜBER", "-", "Mann"}));
  EXPECT_EQ(tokenize("Ein ÜBER-Mann"), (Tokens{"ein", "über", "-", "mann"}));
}

TEST(Tokenizer, DigitsAndUnderscoresAreWordCharacters) {
  EXPECT_EQ(tokenize("3 dogs, 12th place, 3.5m"),
            (Tokens{"3", "dogs", ",", "12th", "place", ",", "3", ".", "5m"}));
  EXPECT_EQ(tokenize("snake_case __x"), (Tokens{"snake_case", "__x"}));
  // Other numbers (superscripts, Roman numerals) are word characters too.
  EXPECT_EQ(tokenize("x² Ⅻ"), (Tokens{"x²", "ⅻ"}));
}

TEST(Tokenizer, CombiningMarksStayInsideTheWord) {
  // "é" written as e + U+0301 COMBINING ACUTE ACCENT.
  EXPECT_EQ(tokenize("Cafe\u0301 noir"), (Tokens{"cafe\u0301", "noir"}));
}

TEST(Tokenizer, CharactersOutsideTheBasicPlane) {
  EXPECT_EQ(tokenize("dog🐕cat"), (Tokens{"dog", "🐕", "cat"}));
  // Math bold A has no lowercase, Deseret capital long I (U+10400) has one (U+10428).
  EXPECT_EQ(tokenize("𝐀 𐐀"), (Tokens{"𝐀", "\U00010428"}));
}

TEST(Detokenize, RejoinsWhatTheTokenizerSplit) {
  EXPECT_EQ(detokenize({"t", "-", "shirt", ","}), "t-shirt,");
  EXPECT_EQ(detokenize({"l", "'", "homme"}), "l'homme");
  EXPECT_EQ(detokenize({"wow", "!", "!", "!"}), "wow!!!");
  EXPECT_EQ(detokenize({"a", "(", "small", ")", "dog", "."}), "a (small) dog.");
  EXPECT_EQ(detokenize({"3", ".", "5", "meters"}), "3.5 meters");
  EXPECT_EQ(detokenize({"a", "-", "b"}), "a-b");
  EXPECT_EQ(detokenize({"-", "a"}), "- a");  // a dash that is not inside a word keeps its spaces
  EXPECT_EQ(detokenize({}), "");
}

TEST(Detokenize, RoundTripsReadableText) {
  const std::vector<std::string> sentences = {
      "a man in a t-shirt, jeans and a cap is walking down the street.",
      "l'homme à la veste rouge regarde l'eau.",
      "zwei hunde (ein großer und ein kleiner) spielen im schnee!",
      "the girl's dog jumps over 3.5 meters?",
      "žena v červeném kabátě: čte knihu.",
  };
  for (const auto& sentence : sentences) EXPECT_EQ(detokenize(tokenize(sentence)), sentence);
}

TEST(Utf8, AcceptsWellFormedText) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("Straße, Žena, 日本, 🐕"));
  EXPECT_TRUE(is_valid_utf8(std::string("a\0b", 3)));  // NUL is a character
  EXPECT_TRUE(is_valid_utf8("\xC2\x80"));               // U+0080, the smallest 2-byte form
  EXPECT_TRUE(is_valid_utf8("\xED\x9F\xBF"));           // U+D7FF, just below the surrogates
  EXPECT_TRUE(is_valid_utf8("\xEE\x80\x80"));           // U+E000, just above them
  EXPECT_TRUE(is_valid_utf8("\xF4\x8F\xBF\xBF"));       // U+10FFFF, the largest code point
}

TEST(Utf8, AcceptsNoncharacters) {
  // Noncharacters are well-formed (only their interchange is discouraged).
  EXPECT_TRUE(is_valid_utf8("\xEF\xBF\xBE"));      // U+FFFE
  EXPECT_TRUE(is_valid_utf8("\xEF\xBF\xBF"));      // U+FFFF
  EXPECT_TRUE(is_valid_utf8("\xEF\xB7\x90"));      // U+FDD0
  EXPECT_TRUE(is_valid_utf8("\xF0\x9F\xBF\xBE"));  // U+1FFFE
}

TEST(Utf8, RejectsMalformedText) {
  EXPECT_FALSE(is_valid_utf8("\xFF"));
  EXPECT_FALSE(is_valid_utf8("Stra\xDF" "e"));            // Latin-1, not UTF-8
  EXPECT_FALSE(is_valid_utf8("\x80"));                    // a stray continuation byte
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));                // overlong "/"
  EXPECT_FALSE(is_valid_utf8("\xE0\x80\xAF"));            // overlong "/", 3 bytes
  EXPECT_FALSE(is_valid_utf8("\xF0\x82\x82\xAC"));        // overlong €, 4 bytes
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));            // U+D800, a surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));        // U+110000
  EXPECT_FALSE(is_valid_utf8("\xF5\x80\x80\x80"));
  EXPECT_FALSE(is_valid_utf8("ab\xE2\x82"));              // truncated €
  EXPECT_FALSE(is_valid_utf8("\xE2\x82 x"));              // truncated € before more text
  EXPECT_FALSE(is_valid_utf8("\xF0\x9F\x90"));            // truncated 🐕
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\xBD\xED\xB0\x95"));  // 🐕 as a surrogate pair (CESU-8)
  EXPECT_FALSE(is_valid_utf8("\xC3\xA9\xA9"));            // é and a stray continuation byte
}

}  // namespace
}  // namespace rnnsearch
