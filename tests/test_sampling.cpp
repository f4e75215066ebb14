// Sampling (decode/sampling.h): the draws follow q ∝ exp(log p / T) over the top-k / nucleus
// candidates (chi-squared at fixed seeds), never leave them, and a Translator's samples depend
// on the seed and the line alone: the same at 1 and 2 threads, batch sizes 1 and 32.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "rnnsearch/decode/decode_options.h"
#include "rnnsearch/decode/sampling.h"
#include "rnnsearch/decode/translator.h"
#include "rnnsearch/text/vocab.h"
#include "support/model_dir.h"
#include "support/temp_dir.h"

namespace rnnsearch {
namespace {

// Pearson's statistic of observed counts against probabilities (each expected count ≥ 5).
double chi_squared(const std::vector<int>& counts, const std::vector<double>& probabilities, int draws) {
  double statistic = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    const double expected = probabilities[k] * draws;
    if (expected == 0) {
      EXPECT_EQ(counts[k], 0) << "drawn with probability 0: " << k;
      continue;
    }
    statistic += (counts[k] - expected) * (counts[k] - expected) / expected;
  }
  return statistic;
}

// The 99.9% quantiles of χ² with 1 … 7 degrees of freedom: a correct sampler exceeds one at a
// given seed with probability 0.001, a wrong one (a weight off by 10% here) almost surely.
constexpr double kChi2Quantile999[] = {0, 10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32};

const std::vector<float> kLogP = {std::log(0.4f), std::log(0.25f), std::log(0.15f), std::log(0.1f), std::log(0.07f),
                                  std::log(0.03f)};

std::vector<int> draw_counts(int topk, double topp, double temperature, int draws,
                             const std::function<bool(int)>& excluded = [](int) { return false; }) {
  TokenSampler sampler;
  std::vector<int> counts(kLogP.size(), 0);
  for (int i = 0; i < draws; ++i)
    ++counts[sampler.draw(kLogP.data(), static_cast<int>(kLogP.size()), topk, topp, temperature,
                          sampling_uniform(7, 3, 0, static_cast<uint64_t>(i)), excluded)];
  return counts;
}

// q ∝ p^(1/T) over the columns kept.
std::vector<double> tempered(const std::vector<bool>& kept, double temperature) {
  std::vector<double> q(kLogP.size(), 0.0);
  double total = 0;
  for (size_t k = 0; k < kLogP.size(); ++k)
    if (kept[k]) total += q[k] = std::exp(kLogP[k] / temperature);
  for (double& x : q) x /= total;
  return q;
}

TEST(Sampling, UniformNumbersDependOnEveryArgumentAndLieInZeroOne) {
  std::set<double> seen;
  double sum = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const double u = sampling_uniform(1, 2, 3, static_cast<uint64_t>(i));
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    seen.insert(u);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(n));
  EXPECT_NEAR(sum / n, 0.5, 0.01);
  const double u = sampling_uniform(1, 2, 3, 4);
  EXPECT_EQ(u, sampling_uniform(1, 2, 3, 4));
  EXPECT_NE(u, sampling_uniform(0, 2, 3, 4));
  EXPECT_NE(u, sampling_uniform(1, 0, 3, 4));
  EXPECT_NE(u, sampling_uniform(1, 2, 0, 4));
  EXPECT_NE(u, sampling_uniform(1, 2, 3, 0));
}

TEST(Sampling, FullDistributionMatchesTheSoftmaxAtEachTemperature) {
  const int draws = 50000;
  for (double temperature : {1.0, 0.5, 2.0}) {
    const std::vector<int> counts = draw_counts(0, 1.0, temperature, draws);
    EXPECT_LT(chi_squared(counts, tempered(std::vector<bool>(6, true), temperature), draws), kChi2Quantile999[5])
        << "T = " << temperature;
  }
  // and it is not just any distribution: the untempered p fails at T = 2
  const std::vector<int> flat = draw_counts(0, 1.0, 2.0, draws);
  EXPECT_GT(chi_squared(flat, tempered(std::vector<bool>(6, true), 1.0), draws), 100.0);
}

TEST(Sampling, TopKNeverLeavesTheKMostProbable) {
  const int draws = 30000;
  const std::vector<int> counts = draw_counts(2, 1.0, 1.0, draws);
  EXPECT_EQ(counts[2] + counts[3] + counts[4] + counts[5], 0);
  EXPECT_LT(chi_squared(counts, tempered({true, true, false, false, false, false}, 1.0), draws), kChi2Quantile999[1]);
  // K at least the vocabulary: the full distribution
  EXPECT_LT(chi_squared(draw_counts(10, 1.0, 1.0, draws), tempered(std::vector<bool>(6, true), 1.0), draws),
            kChi2Quantile999[5]);
}

TEST(Sampling, TopPKeepsTheFewestWhoseMassReachesP) {
  const int draws = 30000;
  // p = 0.4, 0.25, 0.15, 0.1, ...: 0.4 + 0.25 = 0.65 ≥ 0.6; 0.65 < 0.66 ≤ 0.8
  const std::vector<int> two = draw_counts(0, 0.6, 1.0, draws);
  EXPECT_EQ(two[2] + two[3] + two[4] + two[5], 0);
  EXPECT_LT(chi_squared(two, tempered({true, true, false, false, false, false}, 1.0), draws), kChi2Quantile999[1]);
  const std::vector<int> three = draw_counts(0, 0.66, 1.0, draws);
  EXPECT_EQ(three[3] + three[4] + three[5], 0);
  EXPECT_GT(three[2], 0);
  // a tiny P keeps the most probable alone; top-k first, then the nucleus of those K
  EXPECT_EQ(draw_counts(0, 1e-9, 1.0, 1000)[0], 1000);
  const std::vector<int> both = draw_counts(3, 0.9, 1.0, draws);  // the top 3 hold 0.8 < 0.9: all three
  EXPECT_EQ(both[3] + both[4] + both[5], 0);
  EXPECT_LT(chi_squared(both, tempered({true, true, true, false, false, false}, 1.0), draws), kChi2Quantile999[2]);
}

TEST(Sampling, ExcludedColumnsAreNeverDrawn) {
  const int draws = 20000;
  const std::vector<int> counts = draw_counts(0, 1.0, 1.0, draws, [](int k) { return k == 0 || k == 3; });
  EXPECT_EQ(counts[0] + counts[3], 0);
  EXPECT_LT(chi_squared(counts, tempered({false, true, true, false, true, true}, 1.0), draws), kChi2Quantile999[3]);
  // top-k counts among the columns not excluded
  const std::vector<int> top = draw_counts(2, 1.0, 1.0, draws, [](int k) { return k == 0; });
  EXPECT_EQ(top[0] + top[3] + top[4] + top[5], 0);
}

// Vocabularies wider than the sampler's head of 32 (and its wide selection of 512): draws
// that go past the head (the whole distribution in column order, a nucleus among the 512
// most probable or among all) follow q too. p ∝ exp(−slope · rank), ranks shuffled over the
// columns; columns pooled into 8 buckets by rank for the test.
TEST(Sampling, DrawsBeyondTheHeadFollowTheDistribution) {
  struct Case {
    int n;
    double slope, topp;
  };
  // top 32 of n = 2000 at slope 0.005 hold 15%, the top 512 92%
  for (const Case c : {Case{200, 0.02, 1.0}, Case{200, 0.02, 0.95}, Case{2000, 0.005, 0.9}, Case{2000, 0.005, 0.95},
                       Case{2000, 0.005, 1.0}}) {
    const int n = c.n, width = n / 8;
    const auto rank = [&](int k) { return (k * 37) % n; };  // 37 is prime to 200 and 2000
    double total = 0;
    for (int r = 0; r < n; ++r) total += std::exp(-c.slope * r);
    std::vector<float> log_p(n);
    for (int k = 0; k < n; ++k) log_p[k] = static_cast<float>(-c.slope * rank(k) - std::log(total));
    std::vector<double> expected(8, 0.0);
    double kept = 0;
    for (int r = 0; r < n && !(c.topp < 1 && kept >= c.topp); ++r) {  // the nucleus: a prefix of the ranks
      kept += std::exp(-c.slope * r) / total;
      expected[r / width] += std::exp(-c.slope * r) / total;
    }
    for (double& e : expected) e /= kept;
    TokenSampler sampler;
    const int draws = 80000;
    std::vector<int> counts(8, 0);
    for (int i = 0; i < draws; ++i)
      ++counts[rank(sampler.draw(log_p.data(), n, 0, c.topp, 1.0, sampling_uniform(11, 0, 0, static_cast<uint64_t>(i)),
                                 [](int) { return false; })) / width];
    EXPECT_LT(chi_squared(counts, expected, draws), kChi2Quantile999[7]) << "n " << n << ", P " << c.topp;
  }
}

class SampledTranslation : public ::testing::Test {
 protected:
  void SetUp() override { models_ = test::load_six_word_model(dir_.path("m")); }

  std::vector<LineTranslation> translate(const std::vector<std::string>& lines, const BeamOptions& beam, int threads,
                                         int batch_size) {
    TranslatorOptions options;
    options.beam = beam;
    options.threads = threads;
    options.batch_size = batch_size;
    Translator translator(models_.front(), ensemble_weights(models_), options);
    return translator.translate(lines, 0);
  }

  test::TempDir dir_;
  std::vector<Model> models_;
};

std::vector<std::string> sample_lines() {
  const std::vector<std::string> words = {"a", "dog", "runs", "the", "cat", "sleeps"};
  std::vector<std::string> lines;
  for (int k = 0; k < 40; ++k) {
    std::string line;
    for (int w = 0; w <= k % 7; ++w) line += (w ? " " : "") + words[(k * 5 + w * 3) % words.size()];
    lines.push_back(line);
  }
  return lines;
}

std::vector<std::vector<std::vector<int>>> tokens_of(const std::vector<LineTranslation>& translations) {
  std::vector<std::vector<std::vector<int>>> tokens;
  for (const LineTranslation& t : translations) {
    tokens.emplace_back();
    for (const Hypothesis& h : t.hypotheses) tokens.back().push_back(h.tokens);
  }
  return tokens;
}

TEST_F(SampledTranslation, SameSeedSameSamplesAtAnyThreadCountAndBatchSize) {
  const std::vector<std::string> lines = sample_lines();
  BeamOptions beam;
  beam.sampling_topk = 0;  // the whole distribution
  beam.n_best = 3;
  beam.sampling_seed = 5;
  const auto reference = tokens_of(translate(lines, beam, 1, 1));
  EXPECT_EQ(tokens_of(translate(lines, beam, 1, 32)), reference);
  EXPECT_EQ(tokens_of(translate(lines, beam, 2, 1)), reference);
  EXPECT_EQ(tokens_of(translate(lines, beam, 2, 32)), reference);
  for (const auto& samples : reference) EXPECT_EQ(samples.size(), 3u);
  beam.sampling_seed = 6;
  EXPECT_NE(tokens_of(translate(lines, beam, 1, 32)), reference) << "another seed, other samples";
}

// CTranslate2's values: topk 1 (the default) is the search itself, greedy at beam size 1;
// topk 0 samples the whole distribution (here a vocabulary smaller than the sampler's head:
// the draws of top-K with K above it), and topp 1 filters nothing.
TEST_F(SampledTranslation, TopKOneSearchesTopKZeroSamplesAllAndTopPOneFiltersNothing) {
  const std::vector<std::string> lines = sample_lines();
  BeamOptions beam;
  beam.n_best = 3;
  BeamOptions topk_one = beam;
  topk_one.sampling_topk = 1;
  topk_one.sampling_topp = 1;
  const auto searched = translate(lines, beam, 1, 32);
  EXPECT_EQ(tokens_of(translate(lines, topk_one, 1, 32)), tokens_of(searched));
  beam.beam_size = topk_one.beam_size = 1;
  beam.n_best = topk_one.n_best = 0;
  EXPECT_EQ(tokens_of(translate(lines, topk_one, 1, 32)), tokens_of(translate(lines, beam, 1, 32)));

  BeamOptions all;
  all.sampling_topk = 0;
  all.n_best = 3;
  all.sampling_seed = 4;
  const auto sampled = tokens_of(translate(lines, all, 1, 32));
  EXPECT_NE(sampled, tokens_of(searched));
  BeamOptions no_filter = all;
  no_filter.sampling_topp = 1;
  EXPECT_EQ(tokens_of(translate(lines, no_filter, 1, 32)), sampled);
  BeamOptions wider_than_the_vocabulary = all;
  wider_than_the_vocabulary.sampling_topk = 100;
  EXPECT_EQ(tokens_of(translate(lines, wider_than_the_vocabulary, 1, 32)), sampled);
}

// The first token of many samples of one sentence is distributed as the model's p(y_1 | x),
// which a beam as wide as the vocabulary, cut after one token, lists.
TEST_F(SampledTranslation, FirstTokensFollowTheModel) {
  const std::vector<std::string> line = {"the dog runs"};
  BeamOptions all;
  all.beam_size = all.n_best = static_cast<int>(models_.front().tgt_vocab.size()) - 2;  // all but <pad>, <s>
  all.max_output_length = 1;
  all.normalize = 0;
  const LineTranslation first = translate(line, all, 1, 1).front();
  const auto first_token = [](const Hypothesis& h) { return h.tokens.empty() ? Vocab::kEos : h.tokens.front(); };
  std::map<int, double> p;  // over the tokens a search proposes: <pad> and <s> never
  for (const Hypothesis& h : first.hypotheses) p[first_token(h)] = std::exp(h.log_prob);
  ASSERT_EQ(p.size(), first.hypotheses.size());
  double total = 0;
  for (const auto& [token, probability] : p) total += probability;

  BeamOptions sample;
  sample.sampling_topk = 0;  // the whole distribution
  sample.n_best = 20000;
  sample.max_output_length = 1;
  const LineTranslation samples = translate(line, sample, 1, 1).front();
  ASSERT_EQ(samples.hypotheses.size(), 20000u);
  std::map<int, int> drawn;
  for (const Hypothesis& h : samples.hypotheses) ++drawn[first_token(h)];
  std::vector<int> counts;
  std::vector<double> probabilities;
  int pooled = 0;
  double pooled_p = 0;  // tokens expected fewer than 5 times, pooled
  for (const auto& [token, probability] : p) {
    if (probability * 20000 < 5) {
      pooled += drawn[token];
      pooled_p += probability / total;
      continue;
    }
    counts.push_back(drawn[token]);
    probabilities.push_back(probability / total);
  }
  if (pooled_p * 20000 >= 5) {
    counts.push_back(pooled);
    probabilities.push_back(pooled_p);
  }
  ASSERT_GE(counts.size(), 2u);
  ASSERT_LE(counts.size(), 8u);
  EXPECT_LT(chi_squared(counts, probabilities, 20000), kChi2Quantile999[counts.size() - 1]);
}

}  // namespace
}  // namespace rnnsearch
