#pragma once
// Length-bucketed minibatches (what the reference and Marian do): shuffle the corpus, cut it
// into pools of `pool_batches` batches, sort each pool by (source length, target length)
// with a stable sort, cut the pool into batches, then shuffle the order of all batches.
// Deterministic for a given seed. With shuffle off: corpus order, no sorting.
#include <cstdint>
#include <vector>

#include "rnnsearch/text/corpus.h"

namespace rnnsearch {

// The model's input: B sentences, time-major, padded with Vocab::kPad.
struct Batch {
  int size = 0;                      // B
  int src_len = 0, tgt_len = 0;      // S, T: the longest sentence of each side (</s> included)
  std::vector<int> src;              // S*B, src[j*B + b] = token j of sentence b
  std::vector<int> tgt;              // T*B, tgt[i*B + b]
  std::vector<int> src_lengths;      // B, </s> included
  std::vector<int> tgt_lengths;      // B
  std::vector<uint32_t> sentence_ids;  // B, index into the corpus
  // Guided alignment (a corpus with links): sentence b's links between its pieces, flat pairs
  // (source position, target position), are links[2 * link_starts[b] .. 2 * link_starts[b + 1]);
  // both empty otherwise.
  std::vector<int> links, link_starts;
  long target_tokens() const;        // non-padding target tokens (</s> included)
};

// Each inner vector lists the corpus indices of one batch.
std::vector<std::vector<uint32_t>> make_batches(const ParallelCorpus& corpus, int batch_size,
                                                bool shuffle, uint64_t seed,
                                                int pool_batches = 100);

// The batch of sentences src[b], tgt[b] (b < B), whose corpus indices are sentence_ids.
Batch pad_batch(const std::vector<std::vector<int>>& src, const std::vector<std::vector<int>>& tgt,
                const std::vector<uint32_t>& sentence_ids);
// The batch of the corpus's pairs sentence_ids, read in place (a memory-mapped corpus is not
// copied), written into `batch`, whose vectors are reused from batch to batch.
void pad_batch(const ParallelCorpus& corpus, const std::vector<uint32_t>& sentence_ids, Batch& batch);

}  // namespace rnnsearch
