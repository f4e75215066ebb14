// The corpus cache reader (corpus.bin): any bytes are refused with a reason or mapped as a
// corpus whose every sentence can be read and whose ids are all below the vocabulary size.
// The seed is a whole file with key "key", vocabularies of 100.
#include <cstdlib>
#include <string>

#include "fuzz_input.h"
#include "rnnsearch/text/corpus_cache.h"

using namespace rnnsearch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_input("corpus.bin", data, size);
  std::string problem;
  const auto corpus = map_corpus_cache(path, "key", 100, 100, problem);
  if (!corpus) {
    if (problem.empty()) std::abort();
    return 0;
  }
  for (const CorpusSide* side : {&corpus->src, &corpus->tgt})
    for (size_t k = 0; k < side->size(); ++k)
      for (int id : (*side)[k])
        if (id < 0 || id >= 100) std::abort();
  return 0;
}
