#pragma once
// Parallel corpus: both sides read line by line, UTF-8 validated, tokenized, cut into
// subword pieces (subword models) and mapped to ids (each sentence ends with </s>). Pairs
// with an empty side, or a side longer than max_length pieces (</s> not counted), are
// skipped and counted.
#include <cstddef>
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
  size_t size() const { return src.size(); }
};

// Throws rnnsearch::Error with a one-line message for: a missing or unreadable file
// ("FILE: cannot open ..."), invalid UTF-8 ("FILE:LINE: invalid UTF-8"), or a line-count
// mismatch ("SRC and TGT differ in length: SRC has more lines than TGT (line N)").
// max_length 0 = no limit.
ParallelCorpus read_parallel_corpus(const std::string& src_path, const std::string& tgt_path,
                                    const Subwords& src_subwords, const Subwords& tgt_subwords,
                                    const Vocab& src_vocab, const Vocab& tgt_vocab,
                                    const TokenizerOptions& tokenizer, size_t max_length);

// Adds to `counts` the tokens of every line of a (possibly gzipped) file, tokenized and cut
// into pieces by `subwords` (the identity for word vocabularies), for building a vocabulary.
// The file is streamed: one line is held at a time. Returns the number of lines. Throws
// rnnsearch::Error naming the file (and the line, for invalid UTF-8).
size_t count_tokens(const std::string& path, const TokenizerOptions& tokenizer, const Subwords& subwords,
                    TokenCounts& counts);

}  // namespace rnnsearch
