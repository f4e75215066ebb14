// Vocabulary files (docs/design.md §2.3): every accepted file maps ids and tokens both ways.
#include <cstdlib>

#include "fuzz_input.h"
#include "rnnsearch/error.h"
#include "rnnsearch/text/vocab.h"

using namespace rnnsearch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_input("vocab.txt", data, size);
  try {
    const Vocab vocab = Vocab::load(path);
    if (vocab.size() < 4) std::abort();
    for (size_t id = 0; id < vocab.size(); ++id)
      if (vocab.id(vocab.token(static_cast<int>(id))) != static_cast<int>(id)) std::abort();
  } catch (const Error&) {
  }
  return 0;
}
