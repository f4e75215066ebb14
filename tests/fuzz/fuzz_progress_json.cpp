// progress.json, the commit record of a checkpoint set (docs/design.md §2.1): resuming from
// a fuzzed one either loads the committed set or refuses with rnnsearch::Error.
#include "fuzz_model_dir.h"
#include "rnnsearch/error.h"

using namespace rnnsearch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = fuzz::tiny_model_dir();
  fuzz::scratch().write("model/progress.json", std::string(reinterpret_cast<const char*>(data), size));
  try {
    Parameters<float> params(fuzz::tiny_model_config());
    Optimizer optimizer(OptimizerOptions{}, params.values().size());
    const CheckpointSet set(dir);
    const Progress progress = set.load(params, optimizer);
    if (optimizer.steps() != progress.update - progress.skipped_updates) std::abort();
  } catch (const Error&) {
  }
  return 0;
}
