// The parallel-corpus reader: the input up to its first NUL byte is the source file, the
// rest the target file. Every accepted pair is in the vocabulary's id range.
#include <cstdlib>
#include <cstring>

#include "fuzz_input.h"
#include "rnnsearch/error.h"
#include "rnnsearch/text/corpus.h"

using namespace rnnsearch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Vocab src_vocab = Vocab::build({{"a", "b", "ein", "."}}, 1);
  static const Vocab tgt_vocab = Vocab::build({{"x", "y", "un", "."}}, 1);
  const auto* nul = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  const size_t src_size = nul ? static_cast<size_t>(nul - data) : size;
  const std::string src = fuzz::write_input("corpus.src", data, src_size);
  const std::string tgt = fuzz::write_input("corpus.tgt", data + std::min(size, src_size + 1),
                                            size - std::min(size, src_size + 1));
  try {
    const ParallelCorpus corpus =
        read_parallel_corpus(src, tgt, Subwords(), Subwords(), src_vocab, tgt_vocab, TokenizerOptions{}, 20);
    for (size_t k = 0; k < corpus.size(); ++k)
      for (const auto& [ids, vocab] : {std::pair{corpus.src[k], &src_vocab}, std::pair{corpus.tgt[k], &tgt_vocab}})
        for (int id : ids)
          if (id < 0 || static_cast<size_t>(id) >= vocab->size()) std::abort();
    TokenCounts counts;
    count_tokens(src, TokenizerOptions{}, Subwords(), counts);
  } catch (const Error&) {
  }
  return 0;
}
