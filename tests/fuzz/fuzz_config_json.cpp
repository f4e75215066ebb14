// config.json of a model directory (docs/design.md §2.1), read with its vocabularies. Sizes
// must be checked before anything is allocated from them: libFuzzer's malloc limit turns an
// unchecked size into a finding.
#include "fuzz_model_dir.h"
#include "rnnsearch/error.h"

using namespace rnnsearch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = fuzz::tiny_model_dir();
  fuzz::scratch().write("model/config.json", std::string(reinterpret_cast<const char*>(data), size));
  try {
    const ModelDefinition definition = load_model_definition(dir);
    if (parameter_count(definition.config) == 0) std::abort();
  } catch (const Error&) {
  }
  return 0;
}
