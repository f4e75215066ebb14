// Guided alignment's data and cost: word links read and mapped to pieces (text/word_links.h),
// carried by the corpus, its cache and its batches, and the cost of model/guided_alignment.h
// against hand-computed values. (Its gradient is checked with the whole model's in
// test_gradients.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "rnnsearch/model/guided_alignment.h"
#include "rnnsearch/text/batcher.h"
#include "rnnsearch/text/corpus.h"
#include "rnnsearch/text/corpus_cache.h"
#include "rnnsearch/text/word_links.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

namespace rnnsearch {
namespace {

using Links = std::vector<WordLink>;

// Guided alignment reads its links with the one Pharaoh reader (text/pharaoh.h): in the
// line's order, repeats kept.
TEST(WordLinks, ParsesPharaohLines) {
  EXPECT_EQ(parse_pharaoh_line("0-0 2-1 1-3\r"), (Links{{0, 0}, {2, 1}, {1, 3}}));
  EXPECT_EQ(parse_pharaoh_line("  10-2\t3-0 3-0 "), (Links{{10, 2}, {3, 0}, {3, 0}}));
  EXPECT_TRUE(parse_pharaoh_line("").empty());
  for (const std::string bad : {"0-", "-1", "1-2-3", "a-b", "0p1", "1--2", "0-1x", "0--0", "+1-2"})
    EXPECT_EQ(test::error_of([&] { parse_pharaoh_line("0-0 " + bad); }),
              "bad link '" + bad + "' (expected SOURCE-TARGET, 0-based word positions, as 0-0 1-2)");
}

// Words cut into pieces: source "a b c" as a | b1 b2 | c, target "x y" as x1 x2 | y.
TEST(WordLinks, LinkEveryPieceOfTheTargetWordToEveryPieceOfTheSourceWord) {
  const std::vector<int> src_word_of_piece = {0, 1, 1, 2}, tgt_word_of_piece = {0, 0, 1};
  EXPECT_EQ(piece_links({{1, 0}, {2, 1}}, src_word_of_piece, 3, tgt_word_of_piece, 2),
            (std::vector<int>{1, 0, 1, 1, 2, 0, 2, 1, 3, 2}));  // (1,0) (1,1) (2,0) (2,1) (3,2)
  EXPECT_EQ(piece_links({{0, 1}, {0, 1}}, src_word_of_piece, 3, tgt_word_of_piece, 2), (std::vector<int>{0, 2}));
  EXPECT_EQ(test::error_of([&] { piece_links({{3, 0}}, src_word_of_piece, 3, tgt_word_of_piece, 2); }),
            "link 3-0 is outside the sentence (3 source and 2 target words)");
  EXPECT_EQ(test::error_of([&] { piece_links({{0, 2}}, src_word_of_piece, 3, tgt_word_of_piece, 2); }),
            "link 0-2 is outside the sentence (3 source and 2 target words)");
}

class GuidedCorpus : public ::testing::Test {
 protected:
  ParallelCorpus read(const std::string& links, size_t max_length = 0) {
    return read_parallel_corpus(src, tgt, Subwords{}, Subwords{}, src_vocab, tgt_vocab, {}, max_length, 2,
                                dir.write("links", links));
  }
  test::TempDir dir;
  // the second pair is too long for max_length 3, the third has an empty side
  std::string src = dir.write("src", "a dog runs\na dog runs fast .\na dog\n\ndog\n");
  std::string tgt = dir.write("tgt", "ein hund läuft\nein hund läuft\n\nein hund\nhund\n");
  Vocab src_vocab = Vocab::build({{"a", "dog", "runs"}}, 1);
  Vocab tgt_vocab = Vocab::build({{"ein", "hund", "läuft"}}, 1);
};

// The links of kept pairs stay with their pair; those of skipped pairs go with them.
TEST_F(GuidedCorpus, KeepsEachPairsLinks) {
  const ParallelCorpus corpus = read("0-0 1-1 2-2\n4-0\n\n\n0-0\n", 3);
  ASSERT_EQ(corpus.size(), 2u);
  ASSERT_TRUE(corpus.has_links());
  EXPECT_EQ(corpus.links[0].to_vector(), (std::vector<int>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(corpus.links[1].to_vector(), (std::vector<int>{0, 0}));
  EXPECT_FALSE(read_parallel_corpus(src, tgt, Subwords{}, Subwords{}, src_vocab, tgt_vocab, {}, 3).has_links());

  Batch batch;
  pad_batch(corpus, {1, 0}, batch);
  EXPECT_EQ(batch.links, (std::vector<int>{0, 0, 0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(batch.link_starts, (std::vector<int>{0, 1, 4}));
}

TEST_F(GuidedCorpus, BadLinksNameTheFileAndLine) {
  const std::string links = dir.path("links");
  EXPECT_EQ(test::error_of([&] { read("0-0\n0-5\n\n\n0-0\n"); }),
            links + ":2: link 0-5 is outside the sentence (5 source and 3 target words)");
  EXPECT_EQ(test::error_of([&] { read("0-0\n0-0\n\n\n0:0\n"); }),
            links + ":5: bad link '0:0' (expected SOURCE-TARGET, 0-based word positions, as 0-0 1-2)");
  EXPECT_EQ(test::error_of([&] { read("0-0\n"); }),
            src + " and " + links + " differ in length: " + src + " has more lines than " + links + " (line 2)");
}

// The cache keeps the links as a third side and maps them back.
TEST_F(GuidedCorpus, CacheKeepsTheLinks) {
  const ParallelCorpus corpus = read("0-0 1-1 2-2\n4-0 3-1\n\n\n0-0\n");
  const std::string path = dir.path("corpus.bin");
  write_corpus_cache(path, corpus, "key");
  std::string problem;
  const auto cached = map_corpus_cache(path, "key", src_vocab.size(), tgt_vocab.size(), problem);
  ASSERT_TRUE(cached) << problem;
  EXPECT_TRUE(cached->src == corpus.src && cached->tgt == corpus.tgt);
  ASSERT_TRUE(cached->has_links());
  EXPECT_TRUE(cached->links == corpus.links);
  EXPECT_EQ(cached->links[1].to_vector(), (std::vector<int>{3, 1, 4, 0}));
}

// One sentence (B = 1), 3 source positions, 2 target rows: row 0 linked to source 0 and 2,
// row 1 to nothing; its attention, and the cost's weight, scale and ε.
class GuidedCostOfOnePair : public ::testing::Test {
 protected:
  GuidedCostOfOnePair() : batch(pad_batch({{4, 5, 3}}, {{6, 3}}, {0})), alpha(2, 3) {
    batch.links = {0, 0, 2, 0};
    batch.link_starts = {0, 2};
    alpha << 0.5, 0.25, 0.25, 0.1, 0.2, 0.7;
  }
  Batch batch;
  Mat<double> alpha, dalpha;
  const double w = 0.3, scale = 0.5, eps = 1e-6;
};

TEST_F(GuidedCostOfOnePair, IsWhatTheEquationsSay) {
  const double ce = guided_alignment_cost<double>(alpha, batch, GuidedAlignmentCost::ce, w, scale, &dalpha);
  EXPECT_NEAR(ce, w * -(0.5 * std::log(0.5 + eps) + 0.5 * std::log(0.25 + eps)), 1e-12);
  Mat<double> expected = Mat<double>::Zero(2, 3);
  expected(0, 0) = -scale * w * 0.5 / (0.5 + eps);
  expected(0, 2) = -scale * w * 0.5 / (0.25 + eps);
  EXPECT_LT((dalpha - expected).cwiseAbs().maxCoeff(), 1e-12);

  const double mse = guided_alignment_cost<double>(alpha, batch, GuidedAlignmentCost::mse, w, scale, &dalpha);
  // A_0 = (0.5, 0, 0.5): ½ ((0.5 − 0.5)² + 0.25² + (0.25 − 0.5)²)
  EXPECT_NEAR(mse, w * 0.5 * (0.0 + 0.0625 + 0.0625), 1e-12);
  expected.setZero();
  expected.row(0) << 0, scale * w * 0.25, scale * w * -0.25;
  EXPECT_LT((dalpha - expected).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_EQ(guided_alignment_cost<double>(alpha, batch, GuidedAlignmentCost::ce, w, 1, nullptr), ce);
}

// The alignment output's variant: a row without links, in a pair with some, is linked to </s>
// (the last source position) alone; a pair without any link adds nothing.
TEST_F(GuidedCostOfOnePair, UnlinkedRowsGoToTheEndOfTheSource) {
  const double ce =
      guided_alignment_cost<double>(alpha, batch, GuidedAlignmentCost::ce, w, scale, &dalpha, true);
  EXPECT_NEAR(ce, w * -(0.5 * std::log(0.5 + eps) + 0.5 * std::log(0.25 + eps) + std::log(0.7 + eps)), 1e-12);
  EXPECT_NEAR(dalpha(1, 2), -scale * w / (0.7 + eps), 1e-12);
  EXPECT_EQ(dalpha(1, 0), 0.0);
  const double mse =
      guided_alignment_cost<double>(alpha, batch, GuidedAlignmentCost::mse, w, scale, &dalpha, true);
  // row 1 against (0, 0, 1): ½ (0.1² + 0.2² + 0.3²)
  EXPECT_NEAR(mse, w * 0.5 * (0.0625 + 0.0625 + 0.01 + 0.04 + 0.09), 1e-12);
  EXPECT_NEAR(dalpha(1, 2), scale * w * (0.7 - 1.0), 1e-12);
  batch.links.clear();
  batch.link_starts = {0, 0};
  EXPECT_EQ(guided_alignment_cost<double>(alpha, batch, GuidedAlignmentCost::ce, w, scale, &dalpha, true), 0.0);
}

TEST(GuidedAlignmentCost, NamesParseBack) {
  for (GuidedAlignmentCost cost : {GuidedAlignmentCost::ce, GuidedAlignmentCost::mse})
    EXPECT_EQ(parse_guided_alignment_cost(guided_alignment_cost_name(cost)), cost);
  EXPECT_EQ(test::error_of([] { parse_guided_alignment_cost("kl"); }),
            "--guided-alignment-cost must be ce or mse (got 'kl')");
}

}  // namespace
}  // namespace rnnsearch
