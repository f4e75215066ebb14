#pragma once
// The training corpus binarized once (docs/design.md §2.1): both sides'
// flat arrays (CorpusSide) in one file beside the model, memory-mapped by the runs, resumes
// and MPI ranks that follow, so they neither read nor tokenize the text again and the ranks
// of one machine share one copy in the page cache.
//
// Layout: "RNNSCORP", a little-endian uint64 n, n bytes of JSON (the format, the key the
// ids were made from, the counts and widths, the reading's counts, the payload's CRC-32),
// then from the next multiple of 8 the payload: the source starts and the target starts
// (uint64, sentences + 1 each), the source ids and the target ids (uint16 or uint32, each
// array padded with zeros to a multiple of 8 bytes). A corpus with guided alignment's links
// has them as a third side ("links" in the header): its starts after the target's, its
// positions after the target ids.
#include <memory>
#include <optional>
#include <string>

#include "rnnsearch/text/corpus.h"

namespace rnnsearch {

// Binarizes a corpus handed over chunk by chunk (stream_parallel_corpus's chunks) into
// `path`, recording `key` (any text: what the ids were made from, compared whole by
// map_corpus_cache). The ids go to two scratch files beside it (PATH.tmp.PID.src and .tgt,
// removed when the writer is destroyed), only the sentence starts stay in memory, and
// finish() writes the file atomically: a corpus larger than memory can be binarized.
class CorpusCacheWriter {
 public:
  // links: the chunks carry guided alignment's links (ParallelCorpus::links), kept as a
  // third side after the target's.
  CorpusCacheWriter(std::string path, std::string key, bool links = false);
  ~CorpusCacheWriter();
  CorpusCacheWriter(const CorpusCacheWriter&) = delete;
  CorpusCacheWriter& operator=(const CorpusCacheWriter&) = delete;

  void add(const ParallelCorpus& chunk);  // its pairs after those added before; its counts
  void finish();                          // writes `path`; throws rnnsearch::Error on I/O errors

 private:
  struct Side;
  std::vector<Side*> sides() const;  // in file order
  std::string path_, key_;
  std::unique_ptr<Side> src_, tgt_, links_;
  size_t lines_read_ = 0, skipped_empty_ = 0, skipped_too_long_ = 0;
};

// Writes a corpus held in memory to `path` (a CorpusCacheWriter given it whole).
void write_corpus_cache(const std::string& path, const ParallelCorpus& corpus, const std::string& key);

// The corpus in the cache file, memory-mapped, when the file was made from `key` and is
// whole (its size and the CRC-32 of its payload agree with its header, its sentence starts
// are in order, its ids below the vocabulary sizes); otherwise nothing, and `problem` says
// why: no file, made from other data, or damaged. Never throws for the file's content: a
// bad cache is to be rebuilt, not trusted.
std::optional<ParallelCorpus> map_corpus_cache(const std::string& path, const std::string& key, size_t src_vocab_size,
                                              size_t tgt_vocab_size, std::string& problem);

}  // namespace rnnsearch
