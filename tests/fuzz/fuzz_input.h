#pragma once
// What every fuzz target shares: a scratch directory of its own (removed at exit) and a way
// to hand the fuzzer's bytes to code that reads files. A target catches rnnsearch::Error
// (the documented way to refuse bad input); anything else (another exception, a crash, a
// sanitizer report, an allocation over libFuzzer's limit) is a finding.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "../support/temp_dir.h"

namespace rnnsearch::fuzz {

inline const test::TempDir& scratch() {
  static const test::TempDir* dir = [] {
    auto* d = new test::TempDir();
    std::atexit([] { delete &scratch(); });
    return d;
  }();
  return *dir;
}

// Writes the input to `name` in the scratch directory and returns its path.
inline std::string write_input(const std::string& name, const uint8_t* data, size_t size) {
  return scratch().write(name, std::string(reinterpret_cast<const char*>(data), size));
}

}  // namespace rnnsearch::fuzz
