// The statistical aligner of `rnnsearch align --hmm` (align/hmm.h): forward-backward's
// posteriors against brute-force enumeration of every alignment, IBM model 1's closed form,
// EM learning the obvious links of a tiny corpus, agreement, and the pairs it leaves out.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <cmath>
#include <string>
#include <vector>

#include "rnnsearch/align/hmm_tables.h"
#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"

namespace rnnsearch {
namespace {

using align::HmmAligner;
using align::HmmOptions;

const std::vector<std::string> kSource = {"das Haus ist klein", "das Buch ist klein", "ein Buch",
                                          "das Haus", "ein Haus ist gross", "klein ist das Buch"};
const std::vector<std::string> kTarget = {"the house is small", "the book is small", "a book",
                                          "the house", "a house is big", "the book is small"};

// p(a_j = i | s, t) of pair k by summing p(t, a | s) over all (I + 1)^J alignments, with the
// model's own formulas (align/hmm.h) on its learnt t and c.
std::vector<std::vector<double>> enumerated(const HmmAligner& hmm, const align::WordIdCorpus& corpus, size_t k,
                                            double p0) {
  const std::vector<int>& s = corpus.source[k];
  const std::vector<int>& t = corpus.target[k];
  const int I = static_cast<int>(s.size()), J = static_cast<int>(t.size());
  const std::vector<double> c = hmm.jumps();
  const auto jump = [&](int from, int to) {  // from position from (-1: before the sentence) to to
    const auto weight = [&](int d) { return c[static_cast<size_t>(std::clamp(d, -HmmAligner::kMaxJump, HmmAligner::kMaxJump) + HmmAligner::kMaxJump)]; };
    double total = 0;
    for (int i = 0; i < I; ++i) total += weight(i - from);
    return weight(to - from) / total;
  };
  std::vector<std::vector<double>> posterior(static_cast<size_t>(J), std::vector<double>(static_cast<size_t>(I + 1), 0.0));
  std::vector<int> a(static_cast<size_t>(J), 0);  // I stands for ∅
  double total = 0;
  for (;;) {
    double p = 1;
    int last = -1;
    for (int j = 0; j < J; ++j) {
      const int i = a[static_cast<size_t>(j)];
      if (i == I) {
        p *= p0 * hmm.translation(0, t[static_cast<size_t>(j)]);
      } else {
        p *= (1 - p0) * jump(last, i) * hmm.translation(s[static_cast<size_t>(i)], t[static_cast<size_t>(j)]);
        last = i;
      }
    }
    total += p;
    for (int j = 0; j < J; ++j) posterior[static_cast<size_t>(j)][static_cast<size_t>(a[static_cast<size_t>(j)])] += p;
    int j = 0;
    while (j < J && ++a[static_cast<size_t>(j)] > I) a[static_cast<size_t>(j++)] = 0;
    if (j == J) break;
  }
  for (auto& row : posterior)
    for (double& v : row) v /= total;
  return posterior;
}

TEST(HmmAlign, ForwardBackwardPosteriorsEqualEnumeratingEveryAlignment) {
  const align::WordIdCorpus corpus = align::word_id_corpus(kSource, kTarget);
  for (bool agreement : {false, true}) {
    SCOPED_TRACE(agreement);
    HmmOptions options;
    options.ibm1_iterations = 2;
    options.hmm_iterations = 3;
    options.null_probability = 0.3;
    const align::WordIdCorpus back = align::reversed(corpus);
    HmmAligner forward(corpus, options), reverse(back, options);
    align::train_hmm_aligners(forward, &reverse, agreement);
    for (size_t k : {0u, 4u, 5u}) {
      const auto expected = enumerated(forward, corpus, k, options.null_probability);
      const Alignment got = forward.posteriors(k);
      const int I = static_cast<int>(corpus.source[k].size()), J = static_cast<int>(corpus.target[k].size());
      ASSERT_EQ(got.rows, J + 1);
      ASSERT_EQ(got.cols, I + 1);
      for (int j = 0; j < J; ++j)
        for (int i = 0; i <= I; ++i) EXPECT_NEAR(got.at(j, i), expected[static_cast<size_t>(j)][static_cast<size_t>(i)], 1e-5) << k << " " << j << " " << i;
      for (int i = 0; i <= I; ++i) EXPECT_EQ(got.at(J, i), 0.0f) << "the empty last row";
      // the reverse direction is a model of its own: its posteriors enumerate too
      const auto expected_back = enumerated(reverse, back, k, options.null_probability);
      const Alignment got_back = reverse.posteriors(k);
      for (int i = 0; i < I; ++i)
        for (int j = 0; j <= J; ++j) EXPECT_NEAR(got_back.at(i, j), expected_back[static_cast<size_t>(i)][static_cast<size_t>(j)], 1e-5);
    }
  }
}

TEST(HmmAlign, IbmModel1PosteriorsAreTheTableNormalizedOverTheSourceAndEmptyWord) {
  const align::WordIdCorpus corpus = align::word_id_corpus(kSource, kTarget);
  HmmOptions options;
  options.ibm1_iterations = 3;
  options.hmm_iterations = 0;
  options.prior = 0;  // maximum likelihood: each table row sums to 1
  HmmAligner hmm(corpus, options);
  align::train_hmm_aligners(hmm, nullptr, false);
  const Alignment got = hmm.posteriors(1);
  const std::vector<int>& s = corpus.source[1];
  const std::vector<int>& t = corpus.target[1];
  for (size_t j = 0; j < t.size(); ++j) {
    double total = hmm.translation(0, t[j]);
    for (int e : s) total += hmm.translation(e, t[j]);
    for (size_t i = 0; i < s.size(); ++i)
      EXPECT_NEAR(got.at(static_cast<int>(j), static_cast<int>(i)), hmm.translation(s[i], t[j]) / total, 1e-6);
    EXPECT_NEAR(got.at(static_cast<int>(j), static_cast<int>(s.size())), hmm.translation(0, t[j]) / total, 1e-6);
  }
  // a table row is a distribution over the target words seen with its source word
  double row = 0;
  for (int f = 0; f < corpus.target_words; ++f) row += hmm.translation(s[0], f);
  EXPECT_NEAR(row, 1.0, 1e-9);
  EXPECT_EQ(hmm.translation(s[0], 999), 0.0);
}

TEST(HmmAlign, EmLearnsTheObviousLinksOfATinyCorpus) {
  HmmOptions options;
  options.prior = 0;  // maximum likelihood: a corpus this small has no rare-word problem
  for (bool agreement : {false, true}) {
    SCOPED_TRACE(agreement);
    options.agreement = agreement;
    const auto pairs = align::hmm_align(kSource, kTarget, options, align::AlignMethod{}, std::nullopt);
    ASSERT_EQ(pairs.size(), kSource.size());
    for (size_t k : {0u, 1u, 4u}) EXPECT_EQ(align::pharaoh_text(pairs[k].links), "0-0 1-1 2-2 3-3") << k;
    for (size_t k : {2u, 3u}) EXPECT_EQ(align::pharaoh_text(pairs[k].links), "0-0 1-1") << k;
    // reordered, klein ist das Buch / the book is small: the learnt jumps are all forward, so
    // the jump of -3 back to klein loses to ∅; the other three words are found
    EXPECT_EQ(align::pharaoh_text(pairs[5].links), "1-2 2-0 3-1");
    EXPECT_EQ(pairs[5].source[0], "klein");
  }
}

TEST(HmmAlign, WordsAreLowercasedBeforeCounting) {
  const align::WordIdCorpus corpus = align::word_id_corpus({"Haus HAUS haus Straße STRASSE"}, {"House house"});
  EXPECT_EQ(corpus.source[0][0], corpus.source[0][1]);
  EXPECT_EQ(corpus.source[0][1], corpus.source[0][2]);
  EXPECT_NE(corpus.source[0][3], corpus.source[0][4]) << "lowercasing, not case folding: straße ≠ strasse";
  EXPECT_EQ(corpus.target[0][0], corpus.target[0][1]);
  EXPECT_EQ(corpus.source_words, 4) << "∅, haus, straße and strasse";
}

TEST(HmmAlign, StemsAreTheFirstCharactersOfTheLowercasedWord) {
  // 6 code points, not bytes: "größer" and "größere" share "größer" (8 bytes), "Kommissar"
  // and "Kommission" share "kommis"; a word of 6 or fewer characters stays whole
  const std::vector<std::string> src = {"Größer größere Kommissar Kommission Haus Häuser"};
  const align::WordIdCorpus stemmed = align::word_id_corpus(src, {"x"}, 6), whole = align::word_id_corpus(src, {"x"});
  const std::vector<int>& s = stemmed.source[0];
  EXPECT_EQ(s[0], s[1]);
  EXPECT_EQ(s[2], s[3]);
  EXPECT_NE(s[4], s[5]);
  EXPECT_EQ(stemmed.source_words, 5) << "∅, größer, kommis, haus, häuser";
  EXPECT_EQ(whole.source_words, 7);
  const align::WordIdCorpus three = align::word_id_corpus({"Größer grö gr"}, {"x"}, 3);
  EXPECT_EQ(three.source[0][0], three.source[0][1]) << "cut after the ö's two bytes, not inside them";
  EXPECT_NE(three.source[0][1], three.source[0][2]);
}

TEST(HmmAlign, EmptySidesAndInvalidUtf8AreLeftOutWithTheScorersWarnings) {
  std::vector<std::string> src = kSource, tgt = kTarget;
  src.push_back("");
  tgt.push_back("the house");
  src.push_back("das \xff Haus");
  tgt.push_back("the house");
  src.push_back("das Haus");
  tgt.push_back("   ");
  const auto pairs = align::hmm_align(src, tgt, HmmOptions{}, align::AlignMethod{}, std::nullopt);
  ASSERT_EQ(pairs.size(), src.size());
  const std::string suffix = "; not scored, its output line is empty";
  EXPECT_EQ(pairs[6].warning, "empty source" + suffix);
  EXPECT_EQ(pairs[7].warning, "invalid UTF-8 in the source");
  EXPECT_EQ(pairs[8].warning, "empty target" + suffix);
  EXPECT_FALSE(pairs[6].target_side);
  EXPECT_FALSE(pairs[7].target_side);
  EXPECT_TRUE(pairs[8].target_side);
  for (size_t k = 6; k < 9; ++k) {
    EXPECT_FALSE(pairs[k].aligned);
    EXPECT_TRUE(pairs[k].links.empty());
  }
  EXPECT_TRUE(pairs[0].aligned);
  EXPECT_FALSE(pairs[0].links.empty());
  EXPECT_THROW(align::hmm_align({"a"}, {}, HmmOptions{}, align::AlignMethod{}, std::nullopt), Error);
}

// Tables saved and loaded (align/hmm_tables.h) align the training pairs as hmm_align does,
// and new pairs with words never seen; a table that does not fit its word lists is refused.
TEST(HmmAlign, SavedTablesAlignAsTrainingDid) {
  HmmOptions options;
  options.prior = 0;
  const align::HmmTables trained(kSource, kTarget, options);
  const auto expected = align::hmm_align(kSource, kTarget, options, align::AlignMethod{}, std::nullopt);
  const std::string dir = testing::TempDir() + "/hmm-tables-" + std::to_string(::getpid());
  trained.save(dir);
  const align::HmmTables loaded(dir);
  EXPECT_EQ(loaded.options().stem, options.stem);
  EXPECT_NEAR(loaded.options().null_probability, options.null_probability, 1e-7);
  for (const align::HmmTables* tables : {&trained, &loaded}) {
    const auto pairs = tables->align(kSource, kTarget, align::AlignMethod{}, std::nullopt, 200, 2);
    ASSERT_EQ(pairs.size(), expected.size());
    for (size_t k = 0; k < pairs.size(); ++k) EXPECT_EQ(pairs[k].links, expected[k].links) << k;
  }
  // "rot" and "red" were never seen: the words around them keep their links
  const auto fresh = loaded.align({"das rote Haus ist klein"}, {"the red house is small"}, align::AlignMethod{},
                                  std::nullopt, 200, 1, 7);
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].line, 7u);
  for (const align::Link link : {align::Link{0, 0}, align::Link{2, 2}, align::Link{3, 3}, align::Link{4, 4}})
    EXPECT_NE(std::find(fresh[0].links.begin(), fresh[0].links.end(), link), fresh[0].links.end())
        << align::pharaoh_text(fresh[0].links);

  write_file_atomically(dir + "/source.words", "das\nhaus\n");
  try {
    align::HmmTables broken(dir);
    ADD_FAILURE() << "a word list shorter than the table";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/hmm.npz: forward has "), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
  EXPECT_THROW(align::HmmTables missing(dir), Error);
}

// No usable pair at all (none, or every one empty or not UTF-8) trains on nothing: every pair
// unaligned with its warning, whatever the prior. ψ(0) of the empty word's empty row of the
// table used to end the process (a pole error thrown inside an OpenMP loop; issue 81).
TEST(HmmAlign, NoUsablePairIsNoError) {
  for (const double prior : {0.1, 0.0}) {
    for (const bool agreement : {true, false}) {
      HmmOptions options;
      options.prior = prior;
      options.agreement = agreement;
      options.threads = 2;
      EXPECT_TRUE(align::hmm_align({}, {}, options, align::AlignMethod{}, std::nullopt).empty());
      for (const std::vector<std::string>& lines :
           std::vector<std::vector<std::string>>{{""}, {"", " "}, {"\xff", "a \xfe"}}) {
        const auto pairs = align::hmm_align(lines, lines, options, align::AlignMethod{}, std::nullopt);
        ASSERT_EQ(pairs.size(), lines.size());
        for (const align::AlignedPair& pair : pairs) {
          EXPECT_FALSE(pair.aligned);
          EXPECT_TRUE(pair.links.empty());
          EXPECT_FALSE(pair.warning.empty());
        }
      }
    }
  }
  HmmOptions tiny;
  tiny.prior = 1e-310;  // ψ(α) ≈ -1/α overflows: refused before training, not NaN links
  EXPECT_THROW(align::hmm_align(kSource, kTarget, tiny, align::AlignMethod{}, std::nullopt), Error);
}

// HmmOptions::max_length: a pair with a longer side is left out with the Scorer's warning,
// target_side saying which side; the others are aligned as without it.
TEST(HmmAlign, PairsLongerThanMaxLengthAreLeftOut) {
  std::vector<std::string> src = kSource, tgt = kTarget;
  src.push_back("das Haus das Buch ist klein");
  tgt.push_back("the house");
  src.push_back("das Haus");
  tgt.push_back("the house the book is small");
  HmmOptions options;
  options.max_length = 5;
  const auto pairs = align::hmm_align(src, tgt, options, align::AlignMethod{}, std::nullopt);
  const auto all = align::hmm_align(kSource, kTarget, HmmOptions{}, align::AlignMethod{}, std::nullopt);
  ASSERT_EQ(pairs.size(), src.size());
  const std::string warning = "longer than 5 tokens (--max-length); not scored, its output line is empty";
  EXPECT_EQ(pairs[src.size() - 2].warning, warning);
  EXPECT_FALSE(pairs[src.size() - 2].target_side);
  EXPECT_EQ(pairs[src.size() - 1].warning, warning);
  EXPECT_TRUE(pairs[src.size() - 1].target_side);
  for (size_t k = 0; k < kSource.size(); ++k) {
    EXPECT_TRUE(pairs[k].aligned) << k;
    EXPECT_EQ(pairs[k].links, all[k].links) << k;
  }
  options.max_length = 0;
  EXPECT_THROW(align::hmm_align(src, tgt, options, align::AlignMethod{}, std::nullopt), Error);
}

}  // namespace
}  // namespace rnnsearch
