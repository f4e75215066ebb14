#include "rnnsearch/metrics/bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "rnnsearch/error.h"

namespace rnnsearch {

namespace {

// The n-grams of orders 1..max_order of a segment and their counts. Tokens never contain a
// space (they come from splitting on whitespace, or from rnnsearch's tokenizer, which drops
// it), so joining them with one tells every n-gram of every order apart.
using NgramCounts = std::unordered_map<std::string, int>;

NgramCounts count_ngrams(const std::vector<std::string>& tokens, int max_order) {
  NgramCounts counts;
  for (size_t start = 0; start < tokens.size(); ++start) {
    std::string key;
    for (size_t end = start; end < tokens.size() && end < start + static_cast<size_t>(max_order); ++end) {
      if (end > start) key += ' ';
      key += tokens[end];
      ++counts[key];
    }
  }
  return counts;
}

size_t order_of(const std::string& ngram) { return 1 + std::count(ngram.begin(), ngram.end(), ' '); }

// The reference length BLEU compares a hypothesis of length `hyp_len` with: the closest one,
// the shorter of two equally close.
long closest_length(long hyp_len, const std::vector<std::vector<std::string>>& references) {
  long best = -1, best_diff = -1;
  for (const auto& reference : references) {
    const long length = static_cast<long>(reference.size());
    const long diff = std::labs(hyp_len - length);
    if (best_diff < 0 || diff < best_diff || (diff == best_diff && length < best)) {
      best_diff = diff;
      best = length;
    }
  }
  return std::max(best, 0L);
}

// log with log 0 = −9999999999 (sacreBLEU's my_log), so that a zero precision gives BLEU 0.
double floored_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

double default_smooth_value(BleuSmoothing smoothing) { return smoothing == BleuSmoothing::add_k ? 1.0 : 0.1; }

std::vector<std::vector<std::string>> tokenized(const std::vector<std::string>& lines, const BleuOptions& options) {
  std::vector<std::vector<std::string>> result;
  result.reserve(lines.size());
  for (const std::string& line : lines) {
    const std::string_view text = rstrip_python(line);
    result.push_back(options.lowercase && options.tokenizer != BleuTokenizer::multi30k
                         ? bleu_tokens(lowercase_full(text), options.tokenizer)
                         : bleu_tokens(text, options.tokenizer));
  }
  return result;
}

BleuResult score_corpus(const std::vector<std::vector<std::string>>& hypotheses,
                        const std::vector<std::vector<std::vector<std::string>>>& references,
                        const BleuOptions& options) {
  check_reference_streams("BLEU", hypotheses.size(), references);
  BleuStats stats(options.max_order);
  std::vector<std::vector<std::string>> segment_references(references.size());
  for (size_t s = 0; s < hypotheses.size(); ++s) {
    for (size_t k = 0; k < references.size(); ++k) segment_references[k] = references[k][s];
    stats += segment_bleu_stats(hypotheses[s], segment_references, options.max_order);
  }
  return compute_bleu(std::move(stats), options.smoothing, options.smooth_value, options.effective_order);
}

}  // namespace

BleuSmoothing parse_bleu_smoothing(const std::string& name) {
  if (name == "none") return BleuSmoothing::none;
  if (name == "floor") return BleuSmoothing::floor;
  if (name == "add-k") return BleuSmoothing::add_k;
  if (name == "exp") return BleuSmoothing::exp;
  throw Error("--smooth-method: unknown method '" + name + "' (expected exp, floor, add-k or none)");
}

BleuStats& BleuStats::operator+=(const BleuStats& other) {
  hyp_len += other.hyp_len;
  ref_len += other.ref_len;
  for (size_t n = 0; n < correct.size() && n < other.correct.size(); ++n) {
    correct[n] += other.correct[n];
    total[n] += other.total[n];
  }
  return *this;
}

BleuStats segment_bleu_stats(const std::vector<std::string>& hypothesis,
                             const std::vector<std::vector<std::string>>& references, int max_order) {
  // Each reference n-gram may be matched as often as the reference that has it most often.
  NgramCounts reference_counts;
  for (const auto& reference : references)
    for (const auto& [ngram, count] : count_ngrams(reference, max_order)) {
      int& most = reference_counts[ngram];
      most = std::max(most, count);
    }
  BleuStats stats(max_order);
  stats.hyp_len = static_cast<long>(hypothesis.size());
  stats.ref_len = closest_length(stats.hyp_len, references);
  for (const auto& [ngram, count] : count_ngrams(hypothesis, max_order)) {
    const size_t n = order_of(ngram) - 1;
    stats.total[n] += count;
    auto it = reference_counts.find(ngram);
    if (it != reference_counts.end()) stats.correct[n] += std::min(count, it->second);
  }
  return stats;
}

BleuResult compute_bleu(BleuStats stats, BleuSmoothing smoothing, std::optional<double> smooth_value,
                        bool effective_order) {
  const double k = smooth_value.value_or(default_smooth_value(smoothing));
  const int max_order = static_cast<int>(stats.correct.size());
  BleuResult result;
  result.hyp_len = stats.hyp_len;
  result.ref_len = stats.ref_len;
  result.precisions.assign(max_order, 0.0);
  const double c = static_cast<double>(stats.hyp_len), r = static_cast<double>(stats.ref_len);
  result.brevity_penalty = c < r ? (c > 0 ? std::exp(1.0 - r / c) : 0.0) : 1.0;
  const bool any_match = std::any_of(stats.correct.begin(), stats.correct.end(), [](double x) { return x != 0; });
  if (any_match) {
    double mteval_factor = 1.0;  // 2^z of exp smoothing
    int orders = max_order;
    for (int n = 0; n < max_order; ++n) {
      if (smoothing == BleuSmoothing::add_k && n > 0) {
        stats.correct[n] += k;
        stats.total[n] += k;
      }
      if (stats.total[n] == 0) break;
      if (effective_order) orders = n + 1;
      if (stats.correct[n] != 0) {
        result.precisions[n] = 100.0 * stats.correct[n] / stats.total[n];
      } else if (smoothing == BleuSmoothing::exp) {
        mteval_factor *= 2;
        result.precisions[n] = 100.0 / (mteval_factor * stats.total[n]);
      } else if (smoothing == BleuSmoothing::floor) {
        result.precisions[n] = 100.0 * k / stats.total[n];
      }
    }
    // In percent, as sacreBLEU sums the logs, so that the last digit agrees too.
    double log_sum = 0;
    for (int n = 0; n < orders; ++n) log_sum += floored_log(result.precisions[n]);
    result.bleu = result.brevity_penalty * std::exp(log_sum / orders);
  }
  result.correct = std::move(stats.correct);
  result.total = std::move(stats.total);
  return result;
}

BleuResult corpus_bleu(const std::vector<std::string>& hypotheses,
                       const std::vector<std::vector<std::string>>& references, const BleuOptions& options) {
  std::vector<std::vector<std::vector<std::string>>> reference_tokens;
  for (const auto& stream : references) reference_tokens.push_back(tokenized(stream, options));
  return score_corpus(tokenized(hypotheses, options), reference_tokens, options);
}

BleuResult multi_bleu(const std::vector<std::vector<std::string>>& hypotheses,
                      const std::vector<std::vector<std::string>>& references) {
  BleuOptions options;
  options.smoothing = BleuSmoothing::none;
  return score_corpus(hypotheses, {references}, options);
}

std::string bleu_signature(const BleuOptions& options, size_t references) {
  static const char* const kSmoothingNames[] = {"none", "floor", "add-k", "exp"};
  std::string smooth = kSmoothingNames[static_cast<int>(options.smoothing)];
  if (options.smoothing == BleuSmoothing::floor || options.smoothing == BleuSmoothing::add_k) {
    char value[64];
    std::snprintf(value, sizeof value, "[%.2f]", options.smooth_value.value_or(default_smooth_value(options.smoothing)));
    smooth += value;
  }
  const bool lowercased = options.lowercase || options.tokenizer == BleuTokenizer::multi30k;
  return signature_line("BLEU", references,
                        {{"case", lowercased ? "lc" : "mixed"},
                         {"eff", options.effective_order ? "yes" : "no"},
                         {"tok", bleu_tokenizer_name(options.tokenizer)},
                         {"smooth", smooth}});
}

std::string format_bleu(const BleuResult& result, const std::string& signature, int width) {
  std::string details;
  char number[64];
  for (double precision : result.precisions) {
    std::snprintf(number, sizeof number, "%s%.1f", details.empty() ? "" : "/", precision);
    details += number;
  }
  char tail[160];
  std::snprintf(tail, sizeof tail, " (BP = %.3f ratio = %.3f hyp_len = %ld ref_len = %ld)", result.brevity_penalty,
                result.ratio(), result.hyp_len, result.ref_len);
  return score_line(signature, result.bleu, width, details + tail);
}

}  // namespace rnnsearch
