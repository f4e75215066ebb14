// `train --config FILE` (lines 'name = value'): parsed with train's own options and
// validators; a bad file is an rnnsearch::Error naming it.
#include "../../src/cli/commands.h"
#include "fuzz_input.h"
#include "rnnsearch/error.h"

using namespace rnnsearch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = fuzz::write_input("train.ini", data, size);
  try {
    cli::parse_train_options({"--config", path});
  } catch (const Error&) {
  }
  return 0;
}
