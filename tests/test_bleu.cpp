// Corpus BLEU against values worked out by hand from the multi-bleu.perl definition (multi_bleu,
// the validation BLEU, and `rnnsearch bleu --tokenize multi30k`). sacreBLEU's published test
// cases are in test_sacrebleu.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "rnnsearch/error.h"
#include "rnnsearch/metrics/bleu.h"

namespace rnnsearch {
namespace {

using Corpus = std::vector<std::vector<std::string>>;

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> tokens;
  for (std::string token; in >> token;) tokens.push_back(token);
  return tokens;
}

Corpus corpus(const std::vector<std::string>& lines) {
  Corpus result;
  for (const auto& line : lines) result.push_back(words(line));
  return result;
}

TEST(Bleu, PerfectMatchIs100) {
  const Corpus text = corpus({"the cat sat on the mat", "a dog runs in the park ."});
  const BleuResult r = multi_bleu(text, text);
  EXPECT_NEAR(r.bleu, 100.0, 1e-12);
  for (double p : r.precisions) EXPECT_DOUBLE_EQ(p, 100.0);
  EXPECT_DOUBLE_EQ(r.brevity_penalty, 1.0);
  EXPECT_EQ(r.hyp_len, 13);
  EXPECT_EQ(r.ref_len, 13);
  EXPECT_DOUBLE_EQ(r.ratio(), 1.0);
}

TEST(Bleu, NoMatchIsZero) {
  const BleuResult r = multi_bleu(corpus({"a b c d"}), corpus({"w x y z"}));
  EXPECT_EQ(r.bleu, 0.0);
  for (double p : r.precisions) EXPECT_EQ(p, 0.0);
  EXPECT_DOUBLE_EQ(r.brevity_penalty, 1.0);  // c = r = 4
}

TEST(Bleu, ShortHypothesisGetsBrevityPenalty) {
  // Every n-gram of "the cat sat on" is in the reference: 4/4, 3/3, 2/2, 1/1.
  // c = 4 < r = 6, so BP = exp(1 - 6/4) = exp(-0.5) = 0.60653...
  const BleuResult r = multi_bleu(corpus({"the cat sat on"}), corpus({"the cat sat on the mat"}));
  for (double p : r.precisions) EXPECT_DOUBLE_EQ(p, 100.0);
  EXPECT_NEAR(r.brevity_penalty, 0.6065306597, 1e-9);
  EXPECT_NEAR(r.bleu, 60.65306597, 1e-7);
  EXPECT_NEAR(r.ratio(), 4.0 / 6.0, 1e-12);
}

TEST(Bleu, MatchesAreClippedByReferenceCounts) {
  // "the" occurs 4 times but the reference has it once: 1/4 unigrams. The bigram
  // "the the" (3 of them) never occurs in the reference: 0/3, so BLEU is 0.
  const BleuResult r = multi_bleu(corpus({"the the the the"}), corpus({"the cat"}));
  EXPECT_DOUBLE_EQ(r.precisions[0], 25.0);
  EXPECT_DOUBLE_EQ(r.precisions[1], 0.0);
  EXPECT_DOUBLE_EQ(r.precisions[2], 0.0);
  EXPECT_DOUBLE_EQ(r.precisions[3], 0.0);
  EXPECT_EQ(r.bleu, 0.0);
  EXPECT_DOUBLE_EQ(r.brevity_penalty, 1.0);  // c = 4 > r = 2
}

TEST(Bleu, CountsAreSummedOverTheCorpus) {
  // Sentence 1 matches fully: 6/6, 5/5, 4/4, 3/3. Sentence 2 is the clipping case above:
  // 1/4, 0/3, 0/2, 0/1. Corpus precisions: 7/10, 5/8, 4/6, 3/4; c = 10 > r = 8.
  const BleuResult r = multi_bleu(corpus({"the cat sat on the mat", "the the the the"}),
                                   corpus({"the cat sat on the mat", "the cat"}));
  EXPECT_DOUBLE_EQ(r.precisions[0], 70.0);
  EXPECT_DOUBLE_EQ(r.precisions[1], 62.5);
  EXPECT_NEAR(r.precisions[2], 66.666666667, 1e-8);
  EXPECT_DOUBLE_EQ(r.precisions[3], 75.0);
  EXPECT_DOUBLE_EQ(r.brevity_penalty, 1.0);
  // (0.7 * 0.625 * 2/3 * 0.75)^(1/4) = 0.21875^0.25 = 0.683891...
  EXPECT_NEAR(r.bleu, 68.38912, 1e-4);
}

TEST(Bleu, EmptyLinesCountTowardsLengthsOnly) {
  // The empty hypothesis adds nothing to c but 2 to r: c = 6, r = 8, BP = exp(1 - 8/6).
  const BleuResult r = multi_bleu(corpus({"the cat sat on the mat", ""}),
                                   corpus({"the cat sat on the mat", "a b"}));
  for (double p : r.precisions) EXPECT_DOUBLE_EQ(p, 100.0);
  EXPECT_EQ(r.hyp_len, 6);
  EXPECT_EQ(r.ref_len, 8);
  EXPECT_NEAR(r.brevity_penalty, std::exp(-1.0 / 3.0), 1e-12);
  EXPECT_NEAR(r.bleu, 71.653131, 1e-5);
}

TEST(Bleu, EmptyReferenceLineOnlyAddsUnmatchedNgrams) {
  // "x y" against an empty reference: 2 unigrams and 1 bigram, none matched.
  // Unigrams 6/8, bigrams 5/6, trigrams 4/4, 4-grams 3/3; c = 8 > r = 6.
  const BleuResult r = multi_bleu(corpus({"the cat sat on the mat", "x y"}),
                                   corpus({"the cat sat on the mat", ""}));
  EXPECT_DOUBLE_EQ(r.precisions[0], 75.0);
  EXPECT_NEAR(r.precisions[1], 500.0 / 6.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.precisions[2], 100.0);
  EXPECT_DOUBLE_EQ(r.precisions[3], 100.0);
  EXPECT_NEAR(r.bleu, 100.0 * std::pow(0.75 * 5.0 / 6.0, 0.25), 1e-9);
}

TEST(Bleu, AllEmptyCorpusIsZeroWithoutDividingByZero) {
  const BleuResult r = multi_bleu(corpus({"", ""}), corpus({"", ""}));
  EXPECT_EQ(r.bleu, 0.0);
  EXPECT_EQ(r.hyp_len, 0);
  EXPECT_EQ(r.ref_len, 0);
  EXPECT_EQ(r.ratio(), 0.0);
  const BleuResult none = multi_bleu({}, {});
  EXPECT_EQ(none.bleu, 0.0);
}

TEST(Bleu, EmptyHypothesesAgainstRealReferencesGiveZeroPenalty) {
  const BleuResult r = multi_bleu(corpus({""}), corpus({"the cat"}));
  EXPECT_EQ(r.bleu, 0.0);
  EXPECT_EQ(r.brevity_penalty, 0.0);
  EXPECT_EQ(format_bleu(r, "BLEU"), "BLEU = 0.00 0.0/0.0/0.0/0.0 (BP = 0.000 ratio = 0.000 hyp_len = 0 ref_len = 2)");
}

TEST(Bleu, MismatchedLengthsThrow) {
  EXPECT_THROW(multi_bleu(corpus({"a", "b"}), corpus({"a"})), Error);
  EXPECT_THROW(multi_bleu(corpus({"a"}), corpus({})), Error);
}

// sacreBLEU's text line: the signature, the score with `width` decimals, the precisions.
TEST(Bleu, FormatIsSacreBleus) {
  const BleuResult r = multi_bleu(corpus({"the cat sat on"}), corpus({"the cat sat on the mat"}));
  EXPECT_EQ(format_bleu(r, "BLEU|x"),
            "BLEU|x = 60.65 100.0/100.0/100.0/100.0 (BP = 0.607 ratio = 0.667 hyp_len = 4 ref_len = 6)");

  BleuResult shaped;
  shaped.bleu = 35.1254;
  shaped.precisions = {66.06, 41.04, 27.26, 18.64};
  shaped.brevity_penalty = 1.0;
  shaped.hyp_len = 12345;
  shaped.ref_len = 12200;
  EXPECT_EQ(format_bleu(shaped, "BLEU", 1),
            "BLEU = 35.1 66.1/41.0/27.3/18.6 (BP = 1.000 ratio = 1.012 hyp_len = 12345 ref_len = 12200)");
  EXPECT_EQ(format_bleu(shaped, "BLEU", 3).substr(0, 13), "BLEU = 35.125");
}

// --tokenize multi30k: rnnsearch's tokenizer on raw text, lowercased, no smoothing. On text
// that is already tokenized and lowercased (what `rnnsearch tokenize` and `translate` write)
// it is multi-bleu.perl's BLEU of the old `rnnsearch bleu`, whatever --lowercase says.
TEST(Bleu, Multi30kTokenizesLowercasesAndDoesNotSmooth) {
  const std::vector<std::string> raw_ref = {"Ein Mann fährt Fahrrad.", "Zwei Hunde (braun) spielen im Schnee!"};
  const std::vector<std::string> tok_ref = {"ein mann fährt fahrrad .", "zwei hunde ( braun ) spielen im schnee !"};
  const std::vector<std::string> hyp = {"ein mann fährt auto .", "zwei katzen spielen im schnee !"};
  BleuOptions options;
  options.tokenizer = BleuTokenizer::multi30k;
  options.smoothing = BleuSmoothing::none;
  const BleuResult from_raw = corpus_bleu(hyp, {raw_ref}, options);
  const BleuResult from_tokens = corpus_bleu(hyp, {tok_ref}, options);
  const BleuResult old = multi_bleu(corpus(hyp), corpus(tok_ref));
  EXPECT_EQ(from_raw.bleu, old.bleu);
  EXPECT_EQ(from_tokens.bleu, old.bleu);
  EXPECT_EQ(from_raw.hyp_len, 11);
  EXPECT_EQ(from_raw.ref_len, 14);
  EXPECT_GT(old.bleu, 0.0);
  // 3-grams 3/7 ("ein mann fährt", "spielen im schnee", "im schnee !"), 4-grams 1/5
  // ("spielen im schnee !").
  EXPECT_NEAR(old.precisions[2], 300.0 / 7, 1e-12);
  EXPECT_NEAR(old.precisions[3], 20.0, 1e-12);
  options.lowercase = true;
  EXPECT_EQ(corpus_bleu(hyp, {raw_ref}, options).bleu, old.bleu);
  EXPECT_EQ(bleu_signature(options, 1), "BLEU|nrefs:1|case:lc|eff:no|tok:multi30k|smooth:none|version:" +
                                            metric_version());
}

}  // namespace
}  // namespace rnnsearch
