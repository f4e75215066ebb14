#include "rnnsearch/text/corpus.h"

#include "rnnsearch/error.h"
#include "rnnsearch/text/line_reader.h"

namespace rnnsearch {
namespace {

// One file still had line `line` when the other had ended.
Error length_mismatch(const std::string& src_path, const std::string& tgt_path, bool src_longer,
                      size_t line) {
  const std::string& longer = src_longer ? src_path : tgt_path;
  const std::string& shorter = src_longer ? tgt_path : src_path;
  return Error(src_path + " and " + tgt_path + " differ in length: " + longer +
               " has more lines than " + shorter + " (line " + std::to_string(line) + ")");
}

}  // namespace

ParallelCorpus read_parallel_corpus(const std::string& src_path, const std::string& tgt_path,
                                    const Subwords& src_subwords, const Subwords& tgt_subwords,
                                    const Vocab& src_vocab, const Vocab& tgt_vocab,
                                    const TokenizerOptions& tokenizer, size_t max_length) {
  // Both files are streamed together so a huge corpus never sits in memory as text.
  LineReader src_reader(src_path), tgt_reader(tgt_path);
  PieceCache src_pieces(src_subwords), tgt_pieces(tgt_subwords);
  ParallelCorpus corpus{CorpusSide(src_vocab.size()), CorpusSide(tgt_vocab.size())};
  std::string src_line, tgt_line;
  for (;;) {
    const bool has_src = next_valid_line(src_reader, src_line);
    const bool has_tgt = next_valid_line(tgt_reader, tgt_line);
    if (has_src != has_tgt)
      throw length_mismatch(src_path, tgt_path, has_src, corpus.lines_read + 1);
    if (!has_src) break;
    ++corpus.lines_read;

    const auto src_tokens = src_pieces.encode(tokenize(src_line, tokenizer));
    const auto tgt_tokens = tgt_pieces.encode(tokenize(tgt_line, tokenizer));
    if (src_tokens.empty() || tgt_tokens.empty()) {
      ++corpus.skipped_empty;
    } else if (max_length != 0 &&
               (src_tokens.size() > max_length || tgt_tokens.size() > max_length)) {
      ++corpus.skipped_too_long;
    } else {
      corpus.src.push_back(src_vocab.encode(src_tokens));
      corpus.tgt.push_back(tgt_vocab.encode(tgt_tokens));
    }
  }
  return corpus;
}

size_t count_tokens(const std::string& path, const TokenizerOptions& tokenizer, const Subwords& subwords,
                    TokenCounts& counts) {
  LineReader reader(path);
  PieceCache pieces(subwords);
  std::string line;
  while (next_valid_line(reader, line))
    for (const std::string& token : pieces.encode(tokenize(line, tokenizer))) ++counts[token];
  return reader.line_number();
}

}  // namespace rnnsearch
