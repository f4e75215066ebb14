#pragma once
// One exception type for every user-facing failure (bad input file, corrupt model, bad
// option). Its message is the single line the command line prints before exiting non-zero,
// so it always names the file (and line, where there is one) and the problem.
#include <stdexcept>
#include <string>

namespace rnnsearch {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "FILE:LINE: problem" (LINE omitted when 0), the format compilers and Marian use.
inline std::string located(const std::string& file, size_t line, const std::string& problem) {
  return line ? file + ":" + std::to_string(line) + ": " + problem : file + ": " + problem;
}

}  // namespace rnnsearch
