#pragma once
// A text file tokenized and held in memory, line by line: what the streamed readers (vocabulary
// counting, SentencePiece learning) are compared with.
#include <string>
#include <vector>

#include "rnnsearch/text/line_reader.h"
#include "rnnsearch/text/tokenizer.h"

namespace rnnsearch::test {

inline std::vector<std::vector<std::string>> tokenized_lines(const std::string& path,
                                                             const TokenizerOptions& tokenizer) {
  std::vector<std::vector<std::string>> sentences;
  for (const std::string& line : read_lines(path)) sentences.push_back(tokenize(line, tokenizer));
  return sentences;
}

}  // namespace rnnsearch::test
