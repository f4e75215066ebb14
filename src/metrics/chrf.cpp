#include "rnnsearch/metrics/chrf.h"

#include <unordered_map>

#include "rnnsearch/metrics/sacre_tokenizers.h"
#include "rnnsearch/metrics/signature.h"

namespace rnnsearch {

namespace {

constexpr double kEpsilon = 1e-16;

// One counter per order: the character n-grams (orders 1..C), then the word n-grams (1..W).
using Counter = std::unordered_map<std::u32string, long>;

bool is_ascii_punctuation(char32_t c) {
  return std::u32string_view(U"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~").find(c) != std::u32string_view::npos;
}

// The words of chrF++: split on whitespace, one punctuation mark split off the end or else
// the start of a word longer than one character.
std::vector<std::u32string> chrf_words(std::u32string_view text) {
  std::vector<std::u32string> words;
  for (const std::string& word_utf8 : split_python_whitespace(utf8(text))) {
    std::u32string word = code_points(word_utf8);
    if (word.size() > 1 && is_ascii_punctuation(word.back())) {
      words.push_back(word.substr(0, word.size() - 1));
      words.push_back(word.substr(word.size() - 1));
    } else if (word.size() > 1 && is_ascii_punctuation(word.front())) {
      words.push_back(word.substr(0, 1));
      words.push_back(word.substr(1));
    } else {
      words.push_back(std::move(word));
    }
  }
  return words;
}

std::vector<Counter> segment_ngrams(const std::string& segment, const ChrfOptions& options) {
  const std::u32string text = code_points(options.lowercase ? lowercase_full(segment) : segment);
  std::u32string characters;
  if (options.whitespace) {
    characters = text;
  } else {
    for (char32_t c : text)
      if (!is_python_space(c)) characters += c;
  }
  std::vector<Counter> counters;
  for (size_t n = 1; n <= static_cast<size_t>(options.char_order); ++n) {
    Counter& counts = counters.emplace_back();
    for (size_t start = 0; start + n <= characters.size(); ++start) ++counts[characters.substr(start, n)];
  }
  if (options.word_order > 0) {
    const std::vector<std::u32string> words = chrf_words(text);
    for (size_t n = 1; n <= static_cast<size_t>(options.word_order); ++n) {
      Counter& counts = counters.emplace_back();
      for (size_t start = 0; start + n <= words.size(); ++start) {
        std::u32string key = words[start];
        for (size_t k = start + 1; k < start + n; ++k) key += U' ' + words[k];  // words hold no space
        ++counts[key];
      }
    }
  }
  return counters;
}

long total(const Counter& counts) {
  long sum = 0;
  for (const auto& entry : counts) sum += entry.second;
  return sum;
}

// {hyp_i, ref_i, match_i} for every order, flattened.
std::vector<long> match_statistics(const std::vector<Counter>& hypothesis, const std::vector<Counter>& reference) {
  std::vector<long> stats;
  for (size_t i = 0; i < hypothesis.size(); ++i) {
    long matches = 0;
    for (const auto& [ngram, count] : hypothesis[i]) {
      auto it = reference[i].find(ngram);
      if (it != reference[i].end()) matches += std::min(count, it->second);
    }
    stats.push_back(reference[i].empty() ? 0 : total(hypothesis[i]));
    stats.push_back(total(reference[i]));
    stats.push_back(matches);
  }
  return stats;
}

// The formulas of the header, in the order of sacreBLEU's operations so that equal figures
// print equal.
double f_score(const std::vector<long>& stats, const ChrfOptions& options) {
  const int factor = options.beta * options.beta;
  const size_t orders = stats.size() / 3;
  double eps_sum = 0, precision_sum = 0, recall_sum = 0;
  int effective_orders = 0;
  for (size_t i = 0; i < orders; ++i) {
    const long hyp = stats[3 * i], ref = stats[3 * i + 1], match = stats[3 * i + 2];
    const double precision = hyp > 0 ? double(match) / double(hyp) : kEpsilon;
    const double recall = ref > 0 ? double(match) / double(ref) : kEpsilon;
    const double denominator = factor * precision + recall;
    eps_sum += denominator > 0 ? (1 + factor) * precision * recall / denominator : kEpsilon;
    if (hyp > 0 && ref > 0) {
      precision_sum += precision;
      recall_sum += recall;
      ++effective_orders;
    }
  }
  if (options.eps_smoothing) return 100 * eps_sum / static_cast<double>(orders);
  if (effective_orders == 0) return 0.0;
  const double precision = precision_sum / effective_orders, recall = recall_sum / effective_orders;
  if (precision + recall == 0) return 0.0;
  double score = (1 + factor) * precision * recall;
  score /= factor * precision + recall;
  return 100 * score;
}

// "chrF2", "chrF2++": β, then one '+' per word order.
std::string chrf_name(const ChrfOptions& options) {
  return "chrF" + std::to_string(options.beta) + std::string(static_cast<size_t>(options.word_order), '+');
}

}  // namespace

ChrfResult corpus_chrf(const std::vector<std::string>& hypotheses,
                       const std::vector<std::vector<std::string>>& references, const ChrfOptions& options) {
  check_reference_streams("chrF", hypotheses.size(), references);
  const size_t orders = static_cast<size_t>(options.char_order + options.word_order);
  std::vector<long> corpus(3 * orders, 0);
  for (size_t s = 0; s < hypotheses.size(); ++s) {
    const std::vector<Counter> hypothesis = segment_ngrams(hypotheses[s], options);
    std::vector<long> best;
    double best_score = -1;
    for (const auto& stream : references) {
      std::vector<long> stats = match_statistics(hypothesis, segment_ngrams(stream[s], options));
      const double score = f_score(stats, options);
      if (score > best_score) {
        best_score = score;
        best = std::move(stats);
      }
    }
    for (size_t i = 0; i < best.size(); ++i) corpus[i] += best[i];
  }
  ChrfResult result;
  result.score = f_score(corpus, options);
  result.name = chrf_name(options);
  return result;
}

std::string chrf_signature(const ChrfOptions& options, size_t references) {
  return signature_line(chrf_name(options), references,
                        {{"case", options.lowercase ? "lc" : "mixed"},
                         {"eff", options.eps_smoothing ? "no" : "yes"},
                         {"nc", std::to_string(options.char_order)},
                         {"nw", std::to_string(options.word_order)},
                         {"space", options.whitespace ? "yes" : "no"}});
}

}  // namespace rnnsearch
