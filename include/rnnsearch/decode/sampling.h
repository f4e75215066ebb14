#pragma once
// Sampling instead of search (translate --sampling-topk K / --sampling-topp P /
// --sampling-temperature T / --sampling-seed S, with the values of CTranslate2's sampling_topk,
// sampling_topp and sampling_temperature: K = 1 searches, K = 0 samples all tokens; fairseq's
// --sampling-topk, --sampling-topp and --temperature). Each of a sentence's n-best samples
// draws its next token w from
//
//   q(w) ∝ exp(log p(w | y_<t, x) / T)     over the candidates C:
//   C = the K most probable tokens (K > 1), or all (K = 0); then, with P < 1, the fewest of C,
//       most probable first, whose q sums to at least P (nucleus sampling, Holtzman et al. 2020)
//
// and a sample ends at </s> or the length limit, as a hypothesis does. Its log-probability and
// score are the model's (log p, not log q), ranked as beam output is.
//
// The uniform number behind each draw is a function of (seed, sentence key, sample, step)
// alone (a counter-based generator: SplitMix64, Steele et al. 2014), the sentence key being its
// input line: the same seed gives the same samples at any thread count, batch size or MPI size.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace rnnsearch {

// A uniform number in [0, 1) for draw (key, sample, step) under seed.
double sampling_uniform(uint64_t seed, uint64_t key, uint64_t sample, uint64_t step);

// Draws over one row of log-probabilities, reusing its workspaces (no allocation once warm).
// One pass keeps the M most probable columns (M = K, or kHead without top-k) in a heap that
// most columns fail to enter; the draw walks those first, most probable first, and only then,
// when the whole distribution is in play, the other columns in column order, so a peaked
// distribution costs a pass of comparisons and a few exp. A nucleus beyond the kHead most
// probable is looked for among the kWide most probable (a selection), then among all (a sort).
class TokenSampler {
 public:
  // The column of log_p[0 .. n-1] drawn with uniform number u under K = topk, P = topp and
  // T = temperature, skipping the columns for which excluded(column) is true (at least one
  // must remain).
  template <class T, class Excluded>
  int draw(const T* log_p, int n, int topk, double topp, double temperature, double u, Excluded excluded);

 private:
  static constexpr size_t kHead = 32, kWide = 512;
  using Entry = std::pair<double, int>;  // (log p, column)
  // Most probable first; ties by column, so that the order, and the draw, is one.
  static bool more_probable(const Entry& a, const Entry& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  }
  std::vector<Entry> head_;
};

template <class T, class Excluded>
int TokenSampler::draw(const T* log_p, int n, int topk, double topp, double temperature, double u, Excluded excluded) {
  // 1. The M most probable columns, most probable first.
  const size_t m = topk > 0 ? static_cast<size_t>(topk) : kHead;
  head_.clear();
  double threshold = -std::numeric_limits<double>::infinity();  // the heap's least, once full
  constexpr int kBlock = 32;
  for (int k = 0; k < n; ++k) {
    if (head_.size() == m && k % kBlock == 0 && k + kBlock <= n) {  // most blocks hold no entrant:
      const T least = static_cast<T>(threshold);                    // tested at once (vectorised)
      int any = 0;
      for (int j = k; j < k + kBlock; ++j) any |= log_p[j] > least;
      if (!any) {
        k += kBlock - 1;
        continue;
      }
    }
    const double lp = static_cast<double>(log_p[k]);
    if (head_.size() == m && lp <= threshold) continue;  // (a tie loses: its column is higher)
    if (excluded(k)) continue;
    head_.emplace_back(lp, k);
    std::push_heap(head_.begin(), head_.end(), more_probable);
    if (head_.size() > m) {
      std::pop_heap(head_.begin(), head_.end(), more_probable);
      head_.pop_back();
    }
    if (head_.size() == m) threshold = head_.front().first;
  }
  std::sort_heap(head_.begin(), head_.end(), more_probable);
  // 2. q = exp((log p − top) / T), relative to the most probable (so exp never overflows);
  // the mass of the candidates: the head's with top-k or when it holds every column.
  const double top = head_.front().first, inverse_t = 1.0 / temperature;
  const auto q = [&](double lp) { return std::exp((lp - top) * inverse_t); };
  const Entry last = head_.back();
  const auto in_head = [&](int k, double lp) { return lp > last.first || (lp == last.first && k <= last.second); };
  bool rest = topk == 0 && head_.size() == m;  // columns beyond the head are candidates too
  double head_mass = 0;
  for (const Entry& e : head_) head_mass += q(e.first);
  double total = head_mass;
  if (rest)
    for (int k = 0; k < n; ++k) {
      const double lp = static_cast<double>(log_p[k]);
      if (!in_head(k, lp) && !excluded(k)) total += q(lp);
    }
  // 3. The nucleus: the fewest most probable whose mass reaches P.
  if (topp < 1) {
    if (rest && head_mass < topp * total) {  // beyond the head: the kWide most probable, else all
      head_.clear();
      for (int k = 0; k < n; ++k)
        if (!excluded(k)) head_.emplace_back(static_cast<double>(log_p[k]), k);
      auto end = head_.end();
      if (head_.size() > kWide) {
        end = head_.begin() + kWide;
        std::nth_element(head_.begin(), end - 1, head_.end(), more_probable);
        double wide_mass = 0;
        for (auto e = head_.begin(); e != end; ++e) wide_mass += q(e->first);
        if (wide_mass < topp * total) end = head_.end();
      }
      std::sort(head_.begin(), end, more_probable);
    }
    double kept = 0;
    size_t size = 0;
    while (size < head_.size() && kept < topp * total) kept += q(head_[size++].first);
    head_.resize(std::max<size_t>(size, 1));
    total = kept > 0 ? kept : q(head_.front().first);
    rest = false;
  }
  // 4. The draw: the head first, then (the whole distribution) the other columns in order.
  const double target = u * total;
  double cumulative = 0;
  for (const Entry& e : head_) {
    cumulative += q(e.first);
    if (target < cumulative) return e.second;
  }
  int drawn = head_.back().second;
  if (rest)
    for (int k = 0; k < n; ++k) {
      const double lp = static_cast<double>(log_p[k]);
      if (in_head(k, lp) || excluded(k)) continue;
      cumulative += q(lp);
      drawn = k;
      if (target < cumulative) return k;
    }
  return drawn;  // u·total rounded up to the sum
}

}  // namespace rnnsearch
