#include "rnnsearch/text/batcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include "rnnsearch/error.h"

namespace rnnsearch {
namespace {

using Batches = std::vector<std::vector<uint32_t>>;

// A corpus of `n` pairs with random lengths; sentence i's tokens are all 10 + i so a test
// can tell from a padded batch which sentence landed where.
ParallelCorpus random_corpus(size_t n, int max_length = 30) {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> length(1, max_length);
  ParallelCorpus corpus;
  for (size_t i = 0; i < n; ++i) {
    const int token = 10 + static_cast<int>(i);
    for (CorpusSide* side : {&corpus.src, &corpus.tgt}) {
      std::vector<int> sentence(static_cast<size_t>(length(rng)), token);
      sentence.back() = Vocab::kEos;
      side->push_back(sentence);
    }
  }
  return corpus;
}

std::vector<uint32_t> flatten(const Batches& batches) {
  std::vector<uint32_t> all;
  for (const auto& batch : batches) all.insert(all.end(), batch.begin(), batch.end());
  return all;
}

TEST(Batcher, SameSeedSameBatchesOtherSeedOtherBatches) {
  ParallelCorpus corpus = random_corpus(1000);
  Batches a = make_batches(corpus, 16, true, 7, 10);
  EXPECT_EQ(a, make_batches(corpus, 16, true, 7, 10));
  EXPECT_NE(a, make_batches(corpus, 16, true, 8, 10));
  EXPECT_NE(flatten(a), flatten(make_batches(corpus, 16, true, 8, 10)));
}

TEST(Batcher, EverySentenceOncePerEpoch) {
  ParallelCorpus corpus = random_corpus(1003);  // not a multiple of the batch size
  for (bool shuffle : {true, false}) {
    Batches batches = make_batches(corpus, 32, shuffle, 1, 5);
    std::vector<uint32_t> all = flatten(batches);
    std::sort(all.begin(), all.end());
    ASSERT_EQ(all.size(), corpus.size());
    for (uint32_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], i);
    // Only one batch (the end of the last pool) may be short.
    size_t short_batches = 0;
    for (const auto& batch : batches) {
      EXPECT_LE(batch.size(), 32u);
      EXPECT_FALSE(batch.empty());
      short_batches += batch.size() < 32;
    }
    EXPECT_EQ(short_batches, 1u);
  }
}

TEST(Batcher, BatchesAreSortedByLengthWithinPools) {
  ParallelCorpus corpus = random_corpus(2000);
  const int batch_size = 20, pool_batches = 10;
  Batches batches = make_batches(corpus, batch_size, true, 3, pool_batches);
  auto key = [&](uint32_t i) { return std::make_pair(corpus.src.length(i), corpus.tgt.length(i)); };
  for (const auto& batch : batches)
    EXPECT_TRUE(std::is_sorted(batch.begin(), batch.end(),
                               [&](uint32_t a, uint32_t b) { return key(a) < key(b); }));
  // A pool holds 200 random sentences, so a batch spans only a small part of the source
  // length range 1..30; without the sort a batch of 20 would span nearly all of it.
  double spread = 0;
  for (const auto& batch : batches) spread += key(batch.back()).first - key(batch.front()).first;
  EXPECT_LT(spread / static_cast<double>(batches.size()), 6.0);

  // Batch order is shuffled: the batches are not in increasing length order overall.
  std::vector<size_t> first_lengths;
  for (const auto& batch : batches) first_lengths.push_back(key(batch.front()).first);
  EXPECT_FALSE(std::is_sorted(first_lengths.begin(), first_lengths.end()));
}

TEST(Batcher, NoShuffleKeepsCorpusOrder) {
  ParallelCorpus corpus = random_corpus(100);
  Batches batches = make_batches(corpus, 30, false, 99);
  ASSERT_EQ(batches.size(), 4u);
  EXPECT_EQ(batches[3].size(), 10u);
  std::vector<uint32_t> all = flatten(batches);
  for (uint32_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], i);
  EXPECT_EQ(batches, make_batches(corpus, 30, false, 1));  // the seed does not matter
}

TEST(Batcher, RefusesNonPositiveSizes) {
  ParallelCorpus corpus = random_corpus(10);
  EXPECT_THROW(make_batches(corpus, 0, true, 1), Error);
  EXPECT_THROW(make_batches(corpus, 4, true, 1, 0), Error);
  EXPECT_TRUE(make_batches(ParallelCorpus{}, 4, true, 1).empty());
}

TEST(PadBatch, TimeMajorWithPadding) {
  const std::vector<std::vector<int>> src = {{5, 6, 3}, {7, 3}, {8, 9, 10, 3}};
  const std::vector<std::vector<int>> tgt = {{11, 3}, {12, 13, 14, 15, 3}, {3}};
  Batch batch = pad_batch(src, tgt, {40, 41, 42});
  EXPECT_EQ(batch.size, 3);
  EXPECT_EQ(batch.src_len, 4);
  EXPECT_EQ(batch.tgt_len, 5);
  EXPECT_EQ(batch.src_lengths, (std::vector<int>{3, 2, 4}));
  EXPECT_EQ(batch.tgt_lengths, (std::vector<int>{2, 5, 1}));
  EXPECT_EQ(batch.sentence_ids, (std::vector<uint32_t>{40, 41, 42}));
  EXPECT_EQ(batch.target_tokens(), 8);
  ASSERT_EQ(batch.src.size(), 12u);
  ASSERT_EQ(batch.tgt.size(), 15u);
  const int P = Vocab::kPad;
  // Row j holds token j of every sentence.
  EXPECT_EQ(batch.src, (std::vector<int>{5, 7, 8,  //
                                         6, 3, 9,  //
                                         3, P, 10,  //
                                         P, P, 3}));
  EXPECT_EQ(batch.tgt, (std::vector<int>{11, 12, 3,  //
                                         3, 13, P,  //
                                         P, 14, P,  //
                                         P, 15, P,  //
                                         P, 3, P}));
}

// Also padded in place from the corpus, into one Batch reused from batch to batch (batches
// of every length and size follow each other): the same batch as from copied sentences.
TEST(PadBatch, MatchesTheCorpusItCameFrom) {
  ParallelCorpus corpus = random_corpus(300);
  Batch reused;
  for (const auto& ids : make_batches(corpus, 25, true, 5, 4)) {
    std::vector<std::vector<int>> src, tgt;
    for (uint32_t i : ids) {
      src.push_back(corpus.src[i].to_vector());
      tgt.push_back(corpus.tgt[i].to_vector());
    }
    Batch batch = pad_batch(src, tgt, ids);
    pad_batch(corpus, ids, reused);
    EXPECT_EQ(std::make_tuple(reused.size, reused.src_len, reused.tgt_len, reused.src, reused.tgt, reused.src_lengths,
                              reused.tgt_lengths, reused.sentence_ids),
              std::make_tuple(batch.size, batch.src_len, batch.tgt_len, batch.src, batch.tgt, batch.src_lengths,
                              batch.tgt_lengths, batch.sentence_ids));
    long tokens = 0;
    for (int b = 0; b < batch.size; ++b) {
      const SentenceIds sentence = corpus.tgt[ids[static_cast<size_t>(b)]];
      tokens += static_cast<long>(sentence.size());
      for (int i = 0; i < batch.tgt_len; ++i) {
        const int expected = i < static_cast<int>(sentence.size()) ? sentence[static_cast<size_t>(i)]
                                                                   : Vocab::kPad;
        ASSERT_EQ(batch.tgt[static_cast<size_t>(i * batch.size + b)], expected);
      }
    }
    EXPECT_EQ(batch.target_tokens(), tokens);
  }
}

}  // namespace
}  // namespace rnnsearch
