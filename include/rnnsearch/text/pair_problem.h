#pragma once
// Which source/target line pairs `score`, `align` (the model's and --hmm's) and the server's
// /score and /align use: a pair is left out, with a warning, when a side is not valid UTF-8,
// is empty once split into tokens, or holds more than --max-length tokens (skipped rather than
// cut: the score of a cut pair would belong to a different sentence).
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace rnnsearch {

struct PairProblem {
  std::string warning;       // empty: the pair is used
  bool target_side = false;  // the warning is about the target side
};

// The pair's problem, its sides split by `split` into source and target (left empty when a side
// is not valid UTF-8). Warnings: "invalid UTF-8 in the source", "empty target; not scored, its
// output line is empty", "longer than 200 tokens (--max-length); not scored, ...".
PairProblem pair_problem(const std::string& src_line, const std::string& tgt_line, size_t max_length,
                         const std::function<std::vector<std::string>(const std::string&)>& split,
                         std::vector<std::string>& source, std::vector<std::string>& target);

}  // namespace rnnsearch
