// The Prometheus metrics of `rnnsearch serve` (metrics.h). Takes only Metrics::mutex_.
#include "rnnsearch/serve/metrics.h"

#include <sstream>

namespace rnnsearch::serve {

const std::vector<double> Metrics::kLatencyBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
const std::vector<double> Metrics::kStepBounds = {1, 2, 4, 8, 16, 32, 64, 128, 256};

void Metrics::request(const std::string& path, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{path, status}];
  for (size_t k = 0; k < kLatencyBounds.size(); ++k) latency_buckets_[k] += seconds <= kLatencyBounds[k];
  latency_sum_ += seconds;
  ++latency_count_;
}

void Metrics::step(size_t sentences, size_t requests, size_t finished) {
  std::lock_guard<std::mutex> lock(mutex_);
  sentences_ += static_cast<long>(finished);
  for (size_t k = 0; k < kStepBounds.size(); ++k) step_buckets_[k] += static_cast<double>(sentences) <= kStepBounds[k];
  ++steps_;
  step_sentences_ += static_cast<long>(sentences);
  step_requests_ += static_cast<long>(requests);
}

void Metrics::dropped(size_t sentences) {
  std::lock_guard<std::mutex> lock(mutex_);
  dropped_ += static_cast<long>(sentences);
}

namespace {

void histogram(std::ostringstream& out, const std::string& name, const std::string& help,
               const std::vector<double>& bounds, const std::vector<long>& buckets, double sum, long count) {
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << " histogram\n";
  for (size_t k = 0; k < bounds.size(); ++k) out << name << "_bucket{le=\"" << bounds[k] << "\"} " << buckets[k] << '\n';
  out << name << "_bucket{le=\"+Inf\"} " << count << '\n' << name << "_sum " << sum << '\n' << name << "_count " << count << '\n';
}

}  // namespace

std::string Metrics::text(size_t queued_sentences, size_t queued_requests, size_t decoding_sentences) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::ostringstream out;
  out << "# HELP rnnsearch_requests_total HTTP requests answered, by path and status.\n"
         "# TYPE rnnsearch_requests_total counter\n";
  for (const auto& [key, count] : requests_)
    out << "rnnsearch_requests_total{path=\"" << key.first << "\",code=\"" << key.second << "\"} " << count << '\n';
  out << "# HELP rnnsearch_sentences_total Sentences translated.\n# TYPE rnnsearch_sentences_total counter\n"
      << "rnnsearch_sentences_total " << sentences_ << '\n'
      << "# HELP rnnsearch_dropped_sentences_total Sentences of timed-out (or failed) requests dropped untranslated.\n"
         "# TYPE rnnsearch_dropped_sentences_total counter\n"
      << "rnnsearch_dropped_sentences_total " << dropped_ << '\n'
      << "# HELP rnnsearch_steps_total Decoder steps (each for all the sentences a decoding thread is translating).\n"
         "# TYPE rnnsearch_steps_total counter\nrnnsearch_steps_total "
      << steps_ << '\n'
      << "# HELP rnnsearch_step_requests_total Requests summed over decoder steps (those with a sentence in the step).\n"
         "# TYPE rnnsearch_step_requests_total counter\nrnnsearch_step_requests_total "
      << step_requests_ << '\n'
      << "# HELP rnnsearch_queue_sentences Sentences waiting to be decoded.\n# TYPE rnnsearch_queue_sentences gauge\n"
      << "rnnsearch_queue_sentences " << queued_sentences << '\n'
      << "# HELP rnnsearch_queue_requests Requests waiting to be decoded.\n# TYPE rnnsearch_queue_requests gauge\n"
      << "rnnsearch_queue_requests " << queued_requests << '\n'
      << "# HELP rnnsearch_decoding_sentences Sentences being decoded.\n# TYPE rnnsearch_decoding_sentences gauge\n"
      << "rnnsearch_decoding_sentences " << decoding_sentences << '\n';
  histogram(out, "rnnsearch_step_sentences", "Sentences decoded together in a decoder step.", kStepBounds, step_buckets_,
            static_cast<double>(step_sentences_), steps_);
  histogram(out, "rnnsearch_request_seconds", "Time from a request's arrival to its response, in seconds.",
            kLatencyBounds, latency_buckets_, latency_sum_, latency_count_);
  return out.str();
}

}  // namespace rnnsearch::serve
