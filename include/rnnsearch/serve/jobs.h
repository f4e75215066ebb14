#pragma once
// The jobs of `rnnsearch serve` (service.h): what a request's thread waits on while the
// decoding threads work for it, a /translate request's sentences (Job) or a /score or /align
// request (ScoreJob). A Job takes its own lock, never the queue's.
#include <atomic>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "rnnsearch/serve/service.h"

namespace rnnsearch::serve {

struct TranslationService::Job {
  TranslatorOptions options;
  std::vector<double> key;             // TranslatorPool::key(options)
  std::vector<std::string> sentences;  // a copy: a request that times out returns at once
  std::vector<LineSteering> steering;  // theirs: empty, or one per sentence
  std::vector<LineTranslation> results;
  Clock::time_point arrived = Clock::now();
  // Timed out or failed: set with its sentences taken out of the queue (cancel()); those in a
  // search leave it at its next turn (drop_cancelled).
  std::atomic<bool> cancelled{false};
  std::promise<void> done;
  size_t remaining = 0;                // sentences without a result

  // From the decoding threads (a request's sentences may decode on several): one sentence's
  // result; the request is done with its last. fail: its decoding threw.
  void deliver(size_t index, LineTranslation result) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_) return;
    result.line = index;
    results[index] = std::move(result);
    if (--remaining == 0) finish(nullptr);
  }
  void fail(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!finished_) finish(error);
  }

 private:
  void finish(std::exception_ptr error) {
    finished_ = true;
    if (error)
      done.set_exception(error);
    else
      done.set_value();
  }
  std::mutex mutex_;
  bool finished_ = false;  // the promise is set
};

// A /score or /align request: `work` scores it (a copy of the request, the results into
// state it shares with the caller, who may have timed out and gone).
struct TranslationService::ScoreJob {
  std::function<void()> work;
  Clock::time_point arrived = Clock::now();
  std::atomic<bool> cancelled{false};  // timed out: set with the job taken out of the queue
  std::promise<void> done;
};

}  // namespace rnnsearch::serve
