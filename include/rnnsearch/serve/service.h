#pragma once
// What `rnnsearch serve` does behind its HTTP routes (docs/serve.md), without the HTTP: the
// scheduler (service.cpp, the only file that takes TranslationService::mutex_, the queue
// lock), and through it, for the HTTP server, the requests (request.h), the response
// bodies (response.h) and the metrics (metrics.h).
//
//   parse_*_request: a JSON body → a checked request, or RequestError (a 4xx and its message)
//   translate():     the request's sentences join a queue; --threads continuous beam
//                    searches (the CLI's Translator and BeamSearch), each run by its decoding
//                    thread, admit queued sentences with their options between two decoder
//                    steps, up to --batch-size, and let each go as soon as it is finished (so
//                    a sentence never waits for a batch to end, and gets what `rnnsearch
//                    translate` gives it: beam search does not depend on what else shares its
//                    steps); the caller waits for its own results, or until its timeout. On
//                    an idle server the caller runs an idle search itself until its request
//                    is done (no hand-off to a decoding thread and back)
//   score(), align(): forced decoding by the CLI's Scorer or align::Aligner, one request at a
//                    time, by an idle search's thread
//   *_json, info():  the response bodies; the tokens, scores and attention are those of
//                    `translate --format json` (OutputPrinter::record, record_json)
//   metrics_text():  Prometheus' text format
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "rnnsearch/align/aligner.h"
#include "rnnsearch/align/hmm_tables.h"
#include "rnnsearch/decode/call_options.h"
#include "rnnsearch/decode/scorer.h"
#include "rnnsearch/decode/translator_pool.h"
#include "rnnsearch/kernels/precision.h"
#include "rnnsearch/model/model_io.h"
#include "rnnsearch/serve/metrics.h"
#include "rnnsearch/serve/request.h"
#include "rnnsearch/serve/response.h"

namespace rnnsearch::serve {

struct ServiceOptions {
  int batch_size = 32;      // --batch-size: sentences decoded together by one thread
  int batch_wait_ms = 5;    // --batch-wait-ms: how long a busy server waits to start a fuller search
  int threads = 1;          // --threads: decoding threads (searches running at once)
  Precision precision = Precision::fp32;  // --precision, resolved
  // Limits of one request
  int max_sentences = 64;   // --max-sentences: entries of "q" (or "src")
  int max_tokens = 200;     // --max-tokens: source (and score target) tokens of a sentence
  int max_beam_size = 32;   // --max-beam-size
  int timeout_ms = 30000;   // --timeout-ms: from arrival to results, else 503
  int max_queue = 4096;     // --max-queue: sentences waiting; more are refused with 503
  std::string version;      // of the binary, for /info
  // --hmm-tables: what `align --hmm --save-hmm DIR` wrote, for POST /align's "aligner": "hmm"
  // (align/hmm_tables.h); empty: none
  std::string hmm_tables;
};

class TranslationService {
 public:
  // Keeps a reference to models (an ensemble: all share their vocabularies) and to reverse,
  // the target→source models of /align (serve --reverse-model; may be empty). Starts the
  // decoding threads; throws rnnsearch::Error on invalid options.
  TranslationService(const std::vector<Model>& models, const std::vector<Model>& reverse,
                     const ServiceOptions& options);
  ~TranslationService();  // stop()
  TranslationService(const TranslationService&) = delete;
  TranslationService& operator=(const TranslationService&) = delete;

  // Each throws RequestError (400, 413, 422) naming the field at fault (request.h).
  TranslateRequest parse_translate_request(const std::string& body) const {
    return serve::parse_translate_request(body, limits());
  }
  ScoreRequest parse_score_request(const std::string& body) const { return serve::parse_score_request(body, limits()); }
  AlignRequest parse_align_request(const std::string& body) const {
    return serve::parse_align_request(body, limits(), !reverse_.empty(), hmm_tables_ != nullptr);
  }

  // Queued and decoded with the sentences of other requests that share its options; returns
  // one result per sentence, in order (line = its index in the request). Throws RequestError
  // 503 when the queue is full, the server stops, or the timeout passes first.
  std::vector<LineTranslation> translate(const TranslateRequest& request);
  std::vector<ScoredPair> score(const ScoreRequest& request);
  std::vector<align::AlignedPair> align(const AlignRequest& request);

  // The response bodies (response.h).
  nlohmann::ordered_json translate_json(const TranslateRequest& request,
                                        const std::vector<LineTranslation>& results) const {
    return serve::translate_json(request, results, tokenizer_);
  }
  nlohmann::ordered_json score_json(const ScoreRequest& request, const std::vector<ScoredPair>& pairs) const {
    return serve::score_json(request, pairs);
  }
  nlohmann::ordered_json align_json(const std::vector<align::AlignedPair>& pairs) const {
    return serve::align_json(pairs);
  }
  nlohmann::ordered_json info() const { return info_json(models_, reverse_, options_); }
  // The metrics' text with the queue's gauges, read under the queue lock.
  std::string metrics_text() const;
  Metrics& metrics() { return metrics_; }

  // Decodes what is queued, then ends the decoding threads; later requests get 503.
  void stop();
  bool stopping() const { return stopping_; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Job;
  struct Item {  // one sentence of a job
    std::shared_ptr<Job> job;
    size_t index;
  };
  struct ScoreJob;
  // Queues work for score_job (a /score or /align request) and waits for it, or until the
  // timeout (RequestError 503).
  void run_score_job(std::function<void()> work);

  // Until `done` is ready; past the timeout, runs on_timeout with mutex_ held (the job is
  // cancelled) and throws RequestError 503.
  void wait(std::future<void>& done, Clock::time_point arrived, const std::function<void()>& on_timeout);
  void cancel(const std::shared_ptr<Job>& job);
  struct Search;
  bool turn(Search& search, std::unique_lock<std::mutex>& lock);
  enum class Start { idle, worked, admit };
  Start start_search(Search& search, std::unique_lock<std::mutex>& lock);
  void step_search(Search& search);
  void drop_cancelled(Search& search);
  void decode_loop(Search& search);
  void score_job(ScoreJob& job);
  // A call's options (decode/call_options.h) with the server's batching, --max-tokens, --threads
  // and --precision, from which a request's Translator or Scorer options are made. Sentences
  // share a search when their options' keys (TranslatorPool::key) are equal.
  CallOptions call_options(bool shows_attention, bool replace_unk) const;
  std::shared_ptr<Translator> translator(const TranslatorOptions& options, std::unique_lock<std::mutex>& lock);
  // What parse_*_request checks a request against (request.h).
  RequestLimits limits() const {
    return {options_.max_sentences, options_.max_tokens, options_.max_beam_size, tokenizer_};
  }

  const std::vector<Model>& models_;
  const std::vector<Model>& reverse_;
  ServiceOptions options_;
  TokenizerOptions tokenizer_;    // the model's, for the text of a translation and --max-tokens
  TranslatorPool translators_;  // the 8 most recently used option sets' Translators
  std::unique_ptr<Scorer> scorer_, aligning_scorer_, raw_attention_scorer_;  // /score: none, the alignment, the attention
  std::unique_ptr<align::Aligner> aligner_;
  std::unique_ptr<align::HmmTables> hmm_tables_;  // --hmm-tables; null: none
  std::mutex score_mutex_;  // one score or align request at a time (the Scorers' workspaces)
  Metrics metrics_;

  mutable std::mutex mutex_;  // the queue lock: taken in service.cpp only
  std::condition_variable wake_;
  std::deque<Item> queue_;
  std::deque<std::shared_ptr<ScoreJob>> score_queue_;
  // In the decoding threads' searches; lowered before a sentence's result is delivered, so
  // that a client reading /metrics after its response sees it gone.
  std::atomic<size_t> decoding_sentences_{0};
  std::atomic<bool> stopping_{false};
  std::vector<std::unique_ptr<Search>> searches_;  // one per --threads
  std::vector<std::thread> decoders_;             // searches_[t]'s decoding thread
};

}  // namespace rnnsearch::serve
