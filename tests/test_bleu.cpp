// Corpus BLEU against values worked out by hand from the multi-bleu.perl definition.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "rnnsearch/error.h"
#include "rnnsearch/eval/bleu.h"

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
  const BleuResult r = corpus_bleu(text, text);
  EXPECT_DOUBLE_EQ(r.bleu, 100.0);
  for (double p : r.precisions) EXPECT_DOUBLE_EQ(p, 100.0);
  EXPECT_DOUBLE_EQ(r.brevity_penalty, 1.0);
  EXPECT_EQ(r.hyp_len, 13);
  EXPECT_EQ(r.ref_len, 13);
  EXPECT_DOUBLE_EQ(r.ratio(), 1.0);
}

TEST(Bleu, NoMatchIsZero) {
  const BleuResult r = corpus_bleu(corpus({"a b c d"}), corpus({"w x y z"}));
  EXPECT_EQ(r.bleu, 0.0);
  for (double p : r.precisions) EXPECT_EQ(p, 0.0);
  EXPECT_DOUBLE_EQ(r.brevity_penalty, 1.0);  // c = r = 4
}

TEST(Bleu, ShortHypothesisGetsBrevityPenalty) {
  // Every n-gram of "the cat sat on" is in the reference: 4/4, 3/3, 2/2, 1/1.
  // c = 4 < r = 6, so BP = exp(1 - 6/4) = exp(-0.5) = 0.60653...
  const BleuResult r = corpus_bleu(corpus({"the cat sat on"}), corpus({"the cat sat on the mat"}));
  for (double p : r.precisions) EXPECT_DOUBLE_EQ(p, 100.0);
  EXPECT_NEAR(r.brevity_penalty, 0.6065306597, 1e-9);
  EXPECT_NEAR(r.bleu, 60.65306597, 1e-7);
  EXPECT_NEAR(r.ratio(), 4.0 / 6.0, 1e-12);
}

TEST(Bleu, MatchesAreClippedByReferenceCounts) {
  // "the" occurs 4 times but the reference has it once: 1/4 unigrams. The bigram
  // "the the" (3 of them) never occurs in the reference: 0/3, so BLEU is 0.
  const BleuResult r = corpus_bleu(corpus({"the the the the"}), corpus({"the cat"}));
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
  const BleuResult r = corpus_bleu(corpus({"the cat sat on the mat", "the the the the"}),
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
  const BleuResult r = corpus_bleu(corpus({"the cat sat on the mat", ""}),
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
  const BleuResult r = corpus_bleu(corpus({"the cat sat on the mat", "x y"}),
                                   corpus({"the cat sat on the mat", ""}));
  EXPECT_DOUBLE_EQ(r.precisions[0], 75.0);
  EXPECT_NEAR(r.precisions[1], 500.0 / 6.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.precisions[2], 100.0);
  EXPECT_DOUBLE_EQ(r.precisions[3], 100.0);
  EXPECT_NEAR(r.bleu, 100.0 * std::pow(0.75 * 5.0 / 6.0, 0.25), 1e-9);
}

TEST(Bleu, AllEmptyCorpusIsZeroWithoutDividingByZero) {
  const BleuResult r = corpus_bleu(corpus({"", ""}), corpus({"", ""}));
  EXPECT_EQ(r.bleu, 0.0);
  EXPECT_EQ(r.hyp_len, 0);
  EXPECT_EQ(r.ref_len, 0);
  EXPECT_EQ(r.ratio(), 0.0);
  const BleuResult none = corpus_bleu({}, {});
  EXPECT_EQ(none.bleu, 0.0);
}

TEST(Bleu, EmptyHypothesesAgainstRealReferencesGiveZeroPenalty) {
  const BleuResult r = corpus_bleu(corpus({""}), corpus({"the cat"}));
  EXPECT_EQ(r.bleu, 0.0);
  EXPECT_EQ(r.brevity_penalty, 0.0);
  EXPECT_EQ(format_bleu(r),
            "BLEU = 0.00, 0.0/0.0/0.0/0.0 (BP=0.000, ratio=0.000, hyp_len=0, ref_len=2)");
}

TEST(Bleu, MismatchedLengthsThrow) {
  EXPECT_THROW(corpus_bleu(corpus({"a", "b"}), corpus({"a"})), Error);
  EXPECT_THROW(corpus_bleu(corpus({"a"}), corpus({})), Error);
}

TEST(Bleu, FormatMatchesMultiBleuPerl) {
  const BleuResult r = corpus_bleu(corpus({"the cat sat on"}), corpus({"the cat sat on the mat"}));
  EXPECT_EQ(format_bleu(r),
            "BLEU = 60.65, 100.0/100.0/100.0/100.0 (BP=0.607, ratio=0.667, hyp_len=4, ref_len=6)");

  BleuResult shaped;
  shaped.bleu = 35.1234;
  shaped.precisions[0] = 66.06;
  shaped.precisions[1] = 41.04;
  shaped.precisions[2] = 27.26;
  shaped.precisions[3] = 18.64;
  shaped.brevity_penalty = 1.0;
  shaped.hyp_len = 12345;
  shaped.ref_len = 12200;
  EXPECT_EQ(
      format_bleu(shaped),
      "BLEU = 35.12, 66.1/41.0/27.3/18.6 (BP=1.000, ratio=1.012, hyp_len=12345, ref_len=12200)");
}

}  // namespace
}  // namespace rnnsearch
