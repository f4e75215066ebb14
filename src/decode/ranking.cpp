#include "rnnsearch/decode/ranking.h"

#include <algorithm>
#include <cmath>

#include "rnnsearch/decode/beam_search.h"

namespace rnnsearch {

// score = log p / lp + cp − word_penalty · length (the header's formulas)
double ranking_score(const BeamOptions& options, double log_p, int length, double coverage) {
  const double n = static_cast<double>(length);
  const double lp = options.length_penalty_alpha >= 0 ? std::pow((5 + n) / 6, options.length_penalty_alpha)
                                                      : std::pow(n, options.normalize);
  double score = log_p / lp - options.word_penalty * n;
  if (options.coverage_penalty > 0) score += options.coverage_penalty * coverage;
  return score;
}

double coverage_term(const std::vector<double>& sums) {
  double total = 0;
  for (double sum : sums) total += std::log(std::max(1e-30, std::min(sum, 1.0)));
  return total;
}

int max_output_length(int source_length, double max_length_factor) {
  if (max_length_factor > 0)
    return static_cast<int>(std::max(1.0, std::min(std::floor(max_length_factor * source_length), 1e9)));
  return 2 * source_length + 10;
}

}  // namespace rnnsearch
