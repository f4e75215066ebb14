#include "rnnsearch/text/pair_problem.h"

#include <algorithm>

#include "rnnsearch/text/tokenizer.h"

namespace rnnsearch {

PairProblem pair_problem(const std::string& src_line, const std::string& tgt_line, size_t max_length,
                         const std::function<std::vector<std::string>(const std::string&)>& split,
                         std::vector<std::string>& source, std::vector<std::string>& target) {
  PairProblem problem;
  if (!is_valid_utf8(src_line) || !is_valid_utf8(tgt_line)) {
    problem.target_side = is_valid_utf8(src_line);
    problem.warning = std::string("invalid UTF-8 in the ") + (problem.target_side ? "target" : "source");
    return problem;
  }
  source = split(src_line);
  target = split(tgt_line);
  if (source.empty() || target.empty()) {
    problem.target_side = !source.empty();
    problem.warning = std::string("empty ") + (problem.target_side ? "target" : "source");
  } else if (std::max(source.size(), target.size()) > max_length) {
    problem.target_side = source.size() <= max_length;
    problem.warning = "longer than " + std::to_string(max_length) + " tokens (--max-length)";
  }
  if (!problem.warning.empty()) problem.warning += "; not scored, its output line is empty";
  return problem;
}

}  // namespace rnnsearch
