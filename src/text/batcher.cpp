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

// Time-major copy of the sentences get(0) … get(B − 1) (each with size() and operator[])
// into `out`, a length*B block padded with kPad, length the longest; reuses the vectors.
template <typename Get>
void pad_side(size_t batch, const Get& get, std::vector<int>& out, std::vector<int>& lengths, int& length) {
  lengths.resize(batch);
  length = 0;
  for (size_t b = 0; b < batch; ++b) {
    lengths[b] = static_cast<int>(get(b).size());
    length = std::max(length, lengths[b]);
  }
  out.assign(static_cast<size_t>(length) * batch, Vocab::kPad);
  for (size_t b = 0; b < batch; ++b) {
    decltype(auto) sentence = get(b);
    for (size_t j = 0; j < sentence.size(); ++j) out[j * batch + b] = sentence[j];
  }
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
  pad_side(src.size(), [&](size_t b) -> const std::vector<int>& { return src[b]; }, batch.src, batch.src_lengths,
           batch.src_len);
  pad_side(tgt.size(), [&](size_t b) -> const std::vector<int>& { return tgt[b]; }, batch.tgt, batch.tgt_lengths,
           batch.tgt_len);
  batch.sentence_ids = sentence_ids;
  return batch;
}

void pad_batch(const ParallelCorpus& corpus, const std::vector<uint32_t>& sentence_ids, Batch& batch) {
  const size_t size = sentence_ids.size();
  batch.size = static_cast<int>(size);
  pad_side(size, [&](size_t b) { return corpus.src[sentence_ids[b]]; }, batch.src, batch.src_lengths, batch.src_len);
  pad_side(size, [&](size_t b) { return corpus.tgt[sentence_ids[b]]; }, batch.tgt, batch.tgt_lengths, batch.tgt_len);
  batch.sentence_ids.assign(sentence_ids.begin(), sentence_ids.end());
  batch.links.clear();
  batch.link_starts.clear();
  if (!corpus.has_links()) return;
  batch.link_starts.push_back(0);
  for (const uint32_t k : sentence_ids) {
    const SentenceIds links = corpus.links[k];
    batch.links.insert(batch.links.end(), links.begin(), links.end());
    batch.link_starts.push_back(static_cast<int>(batch.links.size() / 2));
  }
}

}  // namespace rnnsearch
