// Line reader (plain or gzip) and tokenizer. Besides not crashing, tokenizing is idempotent:
// the tokens joined by spaces tokenize to themselves, which is what lets references and
// outputs be re-tokenized for BLEU (docs/design.md §3).
#include <cstdlib>

#include "fuzz_input.h"
#include "rnnsearch/error.h"
#include "rnnsearch/text/line_reader.h"
#include "rnnsearch/text/tokenizer.h"

using namespace rnnsearch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_input("input.txt", data, size);
  try {
    LineReader reader(path);
    std::string line;
    while (next_valid_line(reader, line)) {
      for (bool lowercase : {false, true}) {
        TokenizerOptions options;
        options.lowercase = lowercase;
        const std::vector<std::string> tokens = tokenize(line, options);
        for (const std::string& token : tokens)
          if (token.empty() || token.find_first_of(" \t\n") != std::string::npos) std::abort();
        if (tokenize(join_tokens(tokens), options) != tokens) std::abort();
      }
    }
  } catch (const Error&) {
  }
  return 0;
}
