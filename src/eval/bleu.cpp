#include "rnnsearch/eval/bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_map>

#include "rnnsearch/error.h"

namespace rnnsearch {

namespace {

constexpr int kMaxOrder = 4;

using NgramCounts = std::unordered_map<std::string, long>;

// Counts the n-grams of one order in a sentence. The key length-prefixes every token
// ("3:the3:cat"), so two different n-grams can never share a key whatever bytes the
// tokens contain.
NgramCounts count_ngrams(const std::vector<std::string>& tokens, int n) {
  NgramCounts counts;
  for (size_t start = 0; start + n <= tokens.size(); ++start) {
    std::string key;
    for (size_t k = start; k < start + n; ++k) {
      key += std::to_string(tokens[k].size());
      key += ':';
      key += tokens[k];
    }
    ++counts[key];
  }
  return counts;
}

// Hypothesis n-grams of order n that also occur in the reference, each clipped to the
// number of times the reference has it (so "the the the" earns one "the" against "the cat").
long clipped_matches(const std::vector<std::string>& hypothesis,
                     const std::vector<std::string>& reference, int n) {
  const NgramCounts ref_counts = count_ngrams(reference, n);
  long matches = 0;
  for (const auto& [ngram, count] : count_ngrams(hypothesis, n)) {
    auto it = ref_counts.find(ngram);
    if (it != ref_counts.end()) matches += std::min(count, it->second);
  }
  return matches;
}

}  // namespace

BleuResult corpus_bleu(const std::vector<std::vector<std::string>>& hypotheses,
                       const std::vector<std::vector<std::string>>& references) {
  if (hypotheses.size() != references.size())
    throw Error("BLEU: " + std::to_string(hypotheses.size()) + " hypotheses but " +
                std::to_string(references.size()) + " references");

  // multi-bleu.perl sums matches and totals over the whole corpus before dividing, so a
  // sentence too short to have any 4-gram neither helps nor hurts the 4-gram precision.
  long matches[kMaxOrder] = {}, totals[kMaxOrder] = {};
  BleuResult result;
  for (size_t s = 0; s < hypotheses.size(); ++s) {
    const auto& hyp = hypotheses[s];
    const auto& ref = references[s];
    result.hyp_len += static_cast<long>(hyp.size());
    result.ref_len += static_cast<long>(ref.size());
    for (int n = 1; n <= kMaxOrder; ++n) {
      matches[n - 1] += clipped_matches(hyp, ref, n);
      totals[n - 1] += std::max(static_cast<long>(hyp.size()) - n + 1, 0L);
    }
  }

  const double c = static_cast<double>(result.hyp_len);
  const double r = static_cast<double>(result.ref_len);
  // An empty hypothesis corpus gets BP 0 (the limit of exp(1 - r/c) as c -> 0) rather
  // than the division by zero multi-bleu.perl would do.
  result.brevity_penalty = c >= r ? 1.0 : (c > 0 ? std::exp(1.0 - r / c) : 0.0);

  double log_sum = 0;
  bool any_zero = false;
  for (int n = 0; n < kMaxOrder; ++n) {
    const double precision = totals[n] ? double(matches[n]) / double(totals[n]) : 0.0;
    result.precisions[n] = 100.0 * precision;
    if (precision == 0)
      any_zero = true;
    else
      log_sum += std::log(precision);
  }
  // The geometric mean is 0 as soon as one precision is 0 (no smoothing, as multi-bleu.perl).
  result.bleu =
      (c == 0 || any_zero) ? 0.0 : 100.0 * result.brevity_penalty * std::exp(log_sum / kMaxOrder);
  return result;
}

std::string format_bleu(const BleuResult& result) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer,
                "BLEU = %.2f, %.1f/%.1f/%.1f/%.1f (BP=%.3f, ratio=%.3f, hyp_len=%ld, ref_len=%ld)",
                result.bleu, result.precisions[0], result.precisions[1], result.precisions[2],
                result.precisions[3], result.brevity_penalty, result.ratio(), result.hyp_len,
                result.ref_len);
  return buffer;
}

}  // namespace rnnsearch
