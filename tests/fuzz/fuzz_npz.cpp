// .npz archives and the .npy arrays inside (docs/design.md §2.2): the zip layer through a
// file, the .npy decoder on the raw bytes.
#include <cstdlib>

#include "fuzz_input.h"
#include "rnnsearch/error.h"
#include "rnnsearch/io/npz.h"

using namespace rnnsearch;

namespace {

void check(const NpyArray& array) {
  if ((array.is_integer ? array.integers.size() : array.data.size()) != array.size()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    for (const auto& [name, array] : load_npz(fuzz::write_input("input.npz", data, size))) check(array);
  } catch (const Error&) {
  }
  try {
    check(decode_npy(std::string(reinterpret_cast<const char*>(data), size), "input.npy"));
  } catch (const Error&) {
  }
  return 0;
}
