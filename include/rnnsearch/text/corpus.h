#pragma once
// Parallel corpus: both sides read line by line, UTF-8 validated, tokenized, cut into
// subword pieces (subword models) and mapped to ids (each sentence ends with </s>). Pairs
// with an empty side, or a side longer than max_length pieces (</s> not counted), are
// skipped and counted.
//
// The text is streamed in chunks of lines: the reading thread reads and validates a chunk,
// then `threads` threads tokenize, cut and map its lines, and the chunk's pairs are handed
// on in corpus order. Neither the text nor (when streamed) the ids are held whole.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "rnnsearch/text/corpus_side.h"
#include "rnnsearch/text/subwords.h"
#include "rnnsearch/text/tokenizer.h"
#include "rnnsearch/text/vocab.h"

namespace rnnsearch {

struct ParallelCorpus {
  CorpusSide src, tgt;  // ids, each sentence ending in Vocab::kEos
  size_t lines_read = 0;
  size_t skipped_empty = 0;
  size_t skipped_too_long = 0;
  // Guided alignment only (word_links.h), else no sentences: pair k's links between its
  // pieces as flat pairs (source position, target position), both below its lengths
  CorpusSide links = CorpusSide();
  size_t size() const { return src.size(); }
  bool has_links() const { return !links.empty(); }
  void append(const ParallelCorpus& more);  // its pairs after these, its counts added
};

// The side that holds the links of pairs of at most max_length pieces (0 = any length).
CorpusSide link_side(size_t max_length);

// Calls `sink` with each chunk of the corpus in order (its pairs and its counts: the chunks
// add up to the whole corpus). Throws rnnsearch::Error with a one-line message for: a
// missing or unreadable file ("FILE: cannot open ..."), invalid UTF-8 ("FILE:LINE: invalid
// UTF-8"), or a line-count mismatch ("SRC and TGT differ in length: SRC has more lines than
// TGT (line N)"); the chunks before the error have been handed on. max_length 0 = no limit.
// With links_path (guided alignment), that file's line k holds the word links of pair k
// (word_links.h), kept as piece links in ParallelCorpus::links; a bad link throws
// "LINKS:LINE: problem".
void stream_parallel_corpus(const std::string& src_path, const std::string& tgt_path, const Subwords& src_subwords,
                            const Subwords& tgt_subwords, const Vocab& src_vocab, const Vocab& tgt_vocab,
                            const TokenizerOptions& tokenizer, size_t max_length, int threads,
                            const std::function<void(const ParallelCorpus& chunk)>& sink,
                            const std::string& links_path = {});

// The whole corpus in memory (stream_parallel_corpus's chunks joined).
ParallelCorpus read_parallel_corpus(const std::string& src_path, const std::string& tgt_path,
                                    const Subwords& src_subwords, const Subwords& tgt_subwords,
                                    const Vocab& src_vocab, const Vocab& tgt_vocab,
                                    const TokenizerOptions& tokenizer, size_t max_length, int threads = 1,
                                    const std::string& links_path = {});

// Adds to `counts` the tokens of every line of a (possibly gzipped) file, tokenized and cut
// into pieces by `subwords` (the identity for word vocabularies), for building a vocabulary.
// The file is streamed in chunks as above, on `threads` threads. Returns the number of lines.
// Throws rnnsearch::Error naming the file (and the line, for invalid UTF-8).
size_t count_tokens(const std::string& path, const TokenizerOptions& tokenizer, const Subwords& subwords,
                    TokenCounts& counts, int threads = 1);

}  // namespace rnnsearch
