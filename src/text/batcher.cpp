#include "rnnsearch/text/batcher.h"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

#include "rnnsearch/error.h"
#include "rnnsearch/text/vocab.h"

namespace rnnsearch {
namespace {

// Fisher-Yates with the engine's raw output. std::shuffle and the std distributions are
// implementation-defined, so they could order batches differently under another standard
// library; this gives the same order everywhere for a given seed. (The modulo bias of a
// 64-bit draw is negligible.)
template <typename T>
void shuffle_in_place(std::vector<T>& items, std::mt19937_64& rng) {
  for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[rng() % i]);
}

// Consecutive runs of at most `batch_size` of [first, last).
template <typename It>
void cut_into_batches(It first, It last, size_t batch_size,
                      std::vector<std::vector<uint32_t>>& batches) {
  for (It start = first; start != last;) {
    It stop = start + static_cast<std::ptrdiff_t>(
                          std::min(batch_size, static_cast<size_t>(last - start)));
    batches.emplace_back(start, stop);
    start = stop;
  }
}

// Time-major copy of `sentences` into a length*B block padded with kPad.
std::vector<int> pad_side(const std::vector<std::vector<int>>& sentences, int length,
                          std::vector<int>& lengths) {
  const size_t batch = sentences.size();
  std::vector<int> out(static_cast<size_t>(length) * batch, Vocab::kPad);
  lengths.resize(batch);
  for (size_t b = 0; b < batch; ++b) {
    lengths[b] = static_cast<int>(sentences[b].size());
    for (size_t j = 0; j < sentences[b].size(); ++j) out[j * batch + b] = sentences[b][j];
  }
  return out;
}

int longest(const std::vector<std::vector<int>>& sentences) {
  size_t max = 0;
  for (const auto& s : sentences) max = std::max(max, s.size());
  return static_cast<int>(max);
}

}  // namespace

long Batch::target_tokens() const {
  long total = 0;
  for (int length : tgt_lengths) total += length;
  return total;
}

std::vector<std::vector<uint32_t>> make_batches(const ParallelCorpus& corpus, int batch_size,
                                                bool shuffle, uint64_t seed, int pool_batches) {
  if (batch_size < 1 || pool_batches < 1)
    throw Error("batch size and pool size must be positive (got " + std::to_string(batch_size) +
                " and " + std::to_string(pool_batches) + ")");
  std::vector<uint32_t> order(corpus.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);

  std::vector<std::vector<uint32_t>> batches;
  const size_t size = static_cast<size_t>(batch_size);
  if (!shuffle) {
    cut_into_batches(order.begin(), order.end(), size, batches);
    return batches;
  }

  std::mt19937_64 rng(seed);
  shuffle_in_place(order, rng);
  // Sorting only within pools keeps batches length-homogeneous (little padding) while
  // sentences of similar length still meet different partners from epoch to epoch. The
  // stable sort leaves equal-length sentences in their random order.
  const size_t pool = size * static_cast<size_t>(pool_batches);
  auto by_length = [&](uint32_t a, uint32_t b) {
    return std::make_pair(corpus.src.length(a), corpus.tgt.length(a)) <
           std::make_pair(corpus.src.length(b), corpus.tgt.length(b));
  };
  for (size_t start = 0; start < order.size(); start += pool) {
    auto first = order.begin() + static_cast<std::ptrdiff_t>(start);
    auto last = order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + pool));
    std::stable_sort(first, last, by_length);
    cut_into_batches(first, last, size, batches);
  }
  shuffle_in_place(batches, rng);
  return batches;
}

Batch pad_batch(const std::vector<std::vector<int>>& src, const std::vector<std::vector<int>>& tgt,
                const std::vector<uint32_t>& sentence_ids) {
  if (tgt.size() != src.size() || sentence_ids.size() != src.size())
    throw std::invalid_argument("pad_batch: src, tgt and sentence_ids differ in size");
  Batch batch;
  batch.size = static_cast<int>(src.size());
  batch.src_len = longest(src);
  batch.tgt_len = longest(tgt);
  batch.src = pad_side(src, batch.src_len, batch.src_lengths);
  batch.tgt = pad_side(tgt, batch.tgt_len, batch.tgt_lengths);
  batch.sentence_ids = sentence_ids;
  return batch;
}

}  // namespace rnnsearch
