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
#include <vector>

#include "rnnsearch/error.h"
#include "rnnsearch/text/tokenizer.h"

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

// The lines of `text` as text/line_reader.h's read_lines gives a file's (split at "\n", a "\r"
// before it dropped, nothing after a last "\n"), each checked as read_lines checks them when
// check_utf8 (rnnsearch::Error "NAME:LINE: invalid UTF-8"). In memory: the parsers behind it
// run at tens of thousands of inputs a second, where writing each input to a file held them to
// a few hundred (the file reading itself is fuzz_text's and fuzz_corpus's).
inline std::vector<std::string> lines(const std::string& text, const std::string& name, bool check_utf8) {
  std::vector<std::string> out;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r' && end < text.size()) line.pop_back();
    if (check_utf8 && !is_valid_utf8(line)) throw Error(located(name, out.size() + 1, "invalid UTF-8"));
    out.push_back(std::move(line));
    start = end + 1;
  }
  return out;
}

}  // namespace rnnsearch::fuzz
