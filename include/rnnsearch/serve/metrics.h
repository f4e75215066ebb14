#pragma once
// The counters and histograms of `rnnsearch serve`'s GET /metrics (docs/serve.md), in
// Prometheus' text format. Takes only its own lock (Metrics::mutex_), and nothing else while
// holding it: the scheduler calls it with TranslationService::mutex_ held.
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace rnnsearch::serve {

// Counters and histograms of /metrics.
class Metrics {
 public:
  void request(const std::string& path, int status, double seconds);
  // A decoder step of `sentences` sentences of `requests` requests, after which `finished` left.
  void step(size_t sentences, size_t requests, size_t finished);
  // Sentences of timed-out requests dropped untranslated, from the queue or a search.
  void dropped(size_t sentences);
  std::string text(size_t queued_sentences, size_t queued_requests, size_t decoding_sentences) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, long> requests_;  // (path, status) → count
  std::vector<long> latency_buckets_ = std::vector<long>(kLatencyBounds.size(), 0);
  double latency_sum_ = 0;
  long latency_count_ = 0;
  std::vector<long> step_buckets_ = std::vector<long>(kStepBounds.size(), 0);
  long steps_ = 0, sentences_ = 0, step_sentences_ = 0, step_requests_ = 0, dropped_ = 0;
  static const std::vector<double> kLatencyBounds;  // seconds
  static const std::vector<double> kStepBounds;     // sentences
};

}  // namespace rnnsearch::serve
