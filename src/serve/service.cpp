// The scheduler of `rnnsearch serve` (service.h): the queue, the decoding threads' continuous
// beam searches and their turns, the timeouts and the cancellation (the jobs the requests wait
// on: jobs.h). The only file that takes TranslationService::mutex_ (the queue lock); it also
// takes score_mutex_, and calls a Job (its own lock), Metrics (its own) and the TranslatorPool
// (its own).
#include "rnnsearch/serve/service.h"

#include <omp.h>

#include <algorithm>
#include <future>
#include <iostream>
#include <set>
#include <unordered_map>

#include "rnnsearch/error.h"
#include "rnnsearch/serve/jobs.h"
#include "rnnsearch/util/checks.h"

namespace rnnsearch::serve {

// One continuous beam search per --threads (Translator's search `index`, one OpenMP thread
// each), run by its decoding thread, or, when the server is idle, by the thread of the
// request that found it so (translate()): whoever set `running`. Its state lives here, not
// in a thread's locals, so that either can take a turn and the other go on from there.
struct TranslationService::Search {
  explicit Search(int index) : index(index) {}
  const int index;
  bool running = false;                       // a thread is taking a turn (under mutex_)
  std::shared_ptr<Translator> translator;     // of the options of the sentences decoding here
  std::vector<double> key;                    // theirs (Job::key)
  std::unordered_map<size_t, Item> decoding;  // the sentences in the search, by tag
  size_t next_tag = 0;
  // a turn's workspace
  std::vector<Item> admitted, leaving;
  std::vector<std::string> lines;
  std::vector<LineSteering> steering;
  std::vector<size_t> tags;
  std::vector<uint64_t> keys;
  std::vector<Translator::Finished> done;
  std::vector<const Job*> requests;
};

TranslationService::TranslationService(const std::vector<Model>& models, const std::vector<Model>& reverse,
                                       const ServiceOptions& options)
    : models_(models), reverse_(reverse), options_(options), translators_(models, 8) {
  if (models.empty()) throw Error("serve needs a model");
  tokenizer_ = models.front().tokenizer;
  check_at_least("batch-size", options.batch_size, 1);
  check_at_least("max-sentences", options.max_sentences, 1);
  check_at_least("max-tokens", options.max_tokens, 1);
  check_at_least("max-beam-size", options.max_beam_size, 1);
  check_at_least("timeout-ms", options.timeout_ms, 1);
  check_at_least("max-queue", options.max_queue, 1);
  check_at_least("threads", options.threads, 1);
  check_at_least("batch-wait-ms", options.batch_wait_ms, 0);
  // /score: the scores' ranking is the request's (ranking_score in score()); "alignment" keeps the attention
  scorer_ = std::make_unique<Scorer>(models.front(), ensemble_weights(models),
                                     scorer_options(log_prob_ranking(), call_options(false, false)));
  aligning_scorer_ = std::make_unique<Scorer>(models.front(), ensemble_weights(models),
                                              scorer_options(log_prob_ranking(), call_options(true, false)));
  BeamOptions raw = log_prob_ranking();  // "raw_attention": the attention even where a model has an alignment output
  raw.raw_attention = 1;
  raw_attention_scorer_ =
      std::make_unique<Scorer>(models.front(), ensemble_weights(models), scorer_options(raw, call_options(true, false)));
  align::AlignerOptions aopts;
  aopts.batch_size = options.batch_size;
  aopts.max_length = options.max_tokens;
  aopts.threads = options.threads;
  aligner_ = std::make_unique<align::Aligner>(models, reverse, aopts);
  if (!options.hmm_tables.empty()) hmm_tables_ = std::make_unique<align::HmmTables>(options.hmm_tables);
  std::unique_lock<std::mutex> lock(mutex_);
  translator(translator_options(BeamOptions{}, call_options(false, false)), lock);  // the default options', made before the first request
  lock.unlock();
  for (int t = 0; t < options.threads; ++t) searches_.push_back(std::make_unique<Search>(t));
  for (const auto& search : searches_) decoders_.emplace_back([this, &search = *search] { decode_loop(search); });
}

TranslationService::~TranslationService() { stop(); }

void TranslationService::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& decoder : decoders_)
    if (decoder.joinable()) decoder.join();
}

CallOptions TranslationService::call_options(bool shows_attention, bool replace_unk) const {
  CallOptions call;
  call.batch_size = options_.batch_size;
  call.max_length = options_.max_tokens;
  call.threads = options_.threads;
  call.precision = options_.precision;
  call.shows_attention = shows_attention;
  call.replace_unk = replace_unk;
  return call;
}

// The Translator of a search's options, from the pool (decode/translator_pool.h). Called with
// `lock` (of mutex_) held; a new one is made with it released (with --precision int8 or bf16,
// converting the projection takes milliseconds, during which the queue's lock would hold
// every request and search waiting).
std::shared_ptr<Translator> TranslationService::translator(const TranslatorOptions& topts,
                                                           std::unique_lock<std::mutex>& lock) {
  if (auto kept = translators_.find(topts)) return kept;
  lock.unlock();
  auto made = translators_.get(topts);
  lock.lock();
  return made;
}

std::vector<LineTranslation> TranslationService::translate(const TranslateRequest& request) {
  if (request.sentences.empty()) return {};
  auto job = std::make_shared<Job>();
  // the attention kept when the response shows it ("alignment", "heatmap") or "replace_unk" reads it
  job->options = translator_options(
      request.beam, call_options(request.alignment != AlignmentFormat::none || request.heatmap, request.replace_unk));
  job->key = TranslatorPool::key(job->options);
  job->sentences = request.sentences;
  job->steering = request.steering;
  job->results.resize(request.sentences.size());
  job->remaining = request.sentences.size();
  std::future<void> done = job->done.get_future();
  std::unique_lock<std::mutex> lock(mutex_);
  if (stopping_) throw RequestError(503, "the server is stopping");
  if (queue_.size() + request.sentences.size() > static_cast<size_t>(options_.max_queue))
    throw RequestError(503, "busy: " + std::to_string(queue_.size()) + " sentences are queued (--max-queue " +
                                std::to_string(options_.max_queue) + ")");
  for (size_t k = 0; k < request.sentences.size(); ++k) queue_.push_back({job, k});
  // An idle server decodes the request on the request's own thread: waking a decoding
  // thread and being woken by it added two thread wake-ups to a lone request, and ran it on
  // whichever thread woke first, its caches cold (docs/serve.md, Batching; what it saves:
  // docs/benchmarks.md, Serving). The thread takes the turns of an
  // idle search until its request is done (or times out), admitting other requests'
  // sentences as a decoding thread would; the search's thread goes on with what is left.
  Search* own = nullptr;
  if (decoding_sentences_ == 0)
    for (const auto& search : searches_)
      if (!search->running && search->decoding.empty()) {
        own = search.get();
        break;
      }
  if (own) {
    own->running = true;
    if (request.sentences.size() > 1) wake_.notify_all();  // the other searches take their share
    omp_set_num_threads(1);  // as a decoding thread's (decode_loop)
    const auto deadline = job->arrived + std::chrono::milliseconds(options_.timeout_ms);
    const auto answered = [&] { return done.wait_for(std::chrono::seconds(0)) == std::future_status::ready; };
    try {
      while (!answered() && Clock::now() < deadline && turn(*own, lock)) {
      }
    } catch (...) {  // out of memory: the search's decoding thread goes on with it
      if (!lock.owns_lock()) lock.lock();
      own->running = false;
      cancel(job);
      lock.unlock();
      wake_.notify_all();
      throw;
    }
    own->running = false;
    if (!answered() && Clock::now() >= deadline) cancel(job);  // before its search's thread takes a turn
  }
  // The decoding threads, if anything is left for them: a decoding thread could not take
  // what came while this thread held its search.
  const bool others = !own || !own->decoding.empty() || !queue_.empty() || !score_queue_.empty() || stopping_;
  lock.unlock();
  if (others) wake_.notify_all();
  wait(done, job->arrived, [&] { cancel(job); });
  return std::move(job->results);
}

void TranslationService::wait(std::future<void>& done, Clock::time_point arrived,
                              const std::function<void()>& on_timeout) {
  if (done.wait_until(arrived + std::chrono::milliseconds(options_.timeout_ms)) != std::future_status::ready) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      on_timeout();
    }
    throw RequestError(503, "timed out after " + std::to_string(options_.timeout_ms) + " ms (--timeout-ms)");
  }
  done.get();  // rethrows a decoding failure
}

// Called with mutex_ held: the job is cancelled and its queued sentences leave the queue, so
// that the queue holds no cancelled work; those in a search leave it at its next turn.
void TranslationService::cancel(const std::shared_ptr<Job>& job) {
  job->cancelled = true;
  const auto before = queue_.size();
  queue_.erase(std::remove_if(queue_.begin(), queue_.end(), [&](const Item& item) { return item.job == job; }),
               queue_.end());
  metrics_.dropped(before - queue_.size());
}

std::vector<ScoredPair> TranslationService::score(const ScoreRequest& request) {
  if (request.src.empty()) return {};
  auto pairs = std::make_shared<std::vector<ScoredPair>>();
  run_score_job([this, request, pairs] {
    Scorer& scorer = request.alignment == AlignmentFormat::none ? *scorer_
                     : request.ranking.raw_attention            ? *raw_attention_scorer_
                                                                : *aligning_scorer_;
    *pairs = scorer.score(request.src, request.tgt, 0);
    for (ScoredPair& pair : *pairs) pair.score = ranking_score(request.ranking, pair);  // the request's ranking
  });
  return std::move(*pairs);
}

std::vector<align::AlignedPair> TranslationService::align(const AlignRequest& request) {
  if (request.src.empty()) return {};
  auto pairs = std::make_shared<std::vector<align::AlignedPair>>();
  run_score_job([this, request, pairs] {
    if (request.hmm) {  // the HMM tables of --hmm-tables, without a model
      *pairs = hmm_tables_->align(request.src, request.tgt, request.method, request.symmetrize, options_.max_tokens, 1);
      return;
    }
    aligner_->set_reading(request.method, request.symmetrize);
    *pairs = aligner_->align(request.src, request.tgt, 0);
  });
  return std::move(*pairs);
}

void TranslationService::run_score_job(std::function<void()> work) {
  auto job = std::make_shared<ScoreJob>();
  job->work = std::move(work);
  std::future<void> done = job->done.get_future();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) throw RequestError(503, "the server is stopping");
    score_queue_.push_back(job);
  }
  wake_.notify_all();
  wait(done, job->arrived, [&] {
    job->cancelled = true;
    score_queue_.erase(std::remove(score_queue_.begin(), score_queue_.end(), job), score_queue_.end());
  });
}

// A turn: between two decoder steps the search admits queued sentences with its options,
// oldest first, up to its share of the work (--batch-size at most, and no more than an even
// split of the sentences queued and decoding over the searches, so that a burst is spread
// over all threads), then takes one step (step_search). A sentence with other options stops
// the admission: it waits only until this search has emptied, or for another one. An empty
// search first takes the oldest work (start_search). False when there was nothing to do.
// Called with `lock` (of mutex_) held and search.running set; unlocks while decoding.
bool TranslationService::turn(Search& search, std::unique_lock<std::mutex>& lock) {
  const size_t threads = searches_.size(), batch_size = static_cast<size_t>(options_.batch_size);
  // Looked for under the lock (cheap), dropped outside it (rows move).
  if (std::any_of(search.decoding.begin(), search.decoding.end(), [](const auto& d) { return d.second.job->cancelled.load(); })) {
    lock.unlock();
    drop_cancelled(search);
    lock.lock();
  }
  if (search.decoding.empty()) {
    const Start start = start_search(search, lock);
    if (start != Start::admit) return start == Start::worked;
  }
  const size_t share = std::min(batch_size, (queue_.size() + decoding_sentences_ + threads - 1) / threads);
  search.admitted.clear();
  for (auto it = queue_.begin(); it != queue_.end() && it->job->key == search.key &&
                                 search.decoding.size() + search.admitted.size() < share;) {
    search.admitted.push_back(std::move(*it));
    it = queue_.erase(it);
  }
  if (search.decoding.empty() && search.admitted.empty()) return true;  // another search took them
  decoding_sentences_ += search.admitted.size();
  lock.unlock();
  step_search(search);
  lock.lock();
  return true;
}

// An empty search takes the oldest work: a score request (scored alone, one at a time;
// Start::worked), or the oldest sentence's options and their Translator (Start::admit); when
// another search is decoding (a busy server) it then waits up to --batch-wait-ms from that
// sentence's arrival for more. Start::idle: nothing queued. Called as turn() is.
TranslationService::Start TranslationService::start_search(Search& search, std::unique_lock<std::mutex>& lock) {
  if (queue_.empty() && score_queue_.empty()) return Start::idle;
  if (!score_queue_.empty() && (queue_.empty() || score_queue_.front()->arrived <= queue_.front().job->arrived)) {
    std::shared_ptr<ScoreJob> job = score_queue_.front();
    score_queue_.pop_front();
    lock.unlock();
    score_job(*job);
    lock.lock();
    return Start::worked;
  }
  const std::shared_ptr<Job> first = queue_.front().job;
  search.key = first->key;
  try {
    search.translator = translator(first->options, lock);
  } catch (...) {  // out of memory: the request that asked for these options fails
    if (!lock.owns_lock()) lock.lock();
    first->fail(std::current_exception());
    cancel(first);
    return Start::worked;
  }
  if (queue_.empty()) return Start::worked;  // another search took them while the Translator was made
  if (decoding_sentences_ > 0 && !stopping_) {
    const auto matching = [&] {
      return static_cast<size_t>(std::count_if(queue_.begin(), queue_.end(),
                                               [&](const Item& item) { return item.job->key == search.key; }));
    };
    const auto deadline = queue_.front().job->arrived + std::chrono::milliseconds(options_.batch_wait_ms);
    while (!stopping_ && Clock::now() < deadline && matching() < static_cast<size_t>(options_.batch_size))
      wake_.wait_until(lock, deadline);
  }
  return Start::admit;
}

// One decoder step of the search, the sentences just admitted joining it; each sentence
// leaves as soon as it is finished, its result delivered to its request. Called without the
// lock (the search is its caller's while search.running is set).
void TranslationService::step_search(Search& search) {
  search.lines.clear();
  search.steering.clear();
  search.tags.clear();
  search.keys.clear();
  for (Item& item : search.admitted) {
    search.keys.push_back(item.index);  // sampling: a sentence's draws follow from its place in its request
    search.lines.push_back(item.job->sentences[item.index]);
    search.steering.push_back(item.job->steering.empty() ? LineSteering() : item.job->steering[item.index]);
    search.tags.push_back(search.next_tag);
    search.decoding.emplace(search.next_tag++, std::move(item));
  }
  search.requests.clear();
  for (const auto& [tag, item] : search.decoding) search.requests.push_back(item.job.get());
  std::sort(search.requests.begin(), search.requests.end());
  const size_t sentences = search.decoding.size(),
               distinct = static_cast<size_t>(std::unique(search.requests.begin(), search.requests.end()) -
                                              search.requests.begin());
  std::vector<Translator::Finished>& done = search.done;
  try {
    if (!search.lines.empty()) search.translator->add(search.index, search.lines, search.tags, done, search.steering, search.keys);
    search.translator->step(search.index, done);
    // Metrics and the count before the results: a client may ask /metrics next.
    metrics_.step(sentences, distinct, done.size());
    search.leaving.clear();
    for (Translator::Finished& finished : done) {
      const auto it = search.decoding.find(finished.tag);
      search.leaving.push_back(std::move(it->second));
      search.decoding.erase(it);
    }
    decoding_sentences_ -= search.leaving.size();
    for (size_t k = 0; k < search.leaving.size(); ++k)  // leaving[k] is done[k]'s sentence
      search.leaving[k].job->deliver(search.leaving[k].index, std::move(done[k].translation));
  } catch (...) {
    decoding_sentences_ -= search.decoding.size();  // those still counted
    for (auto& [tag, item] : search.decoding) item.job->fail(std::current_exception());
    search.decoding.clear();
    search.translator->clear(search.index);
  }
  done.clear();
}

// The sentences of cancelled requests leave the search before its next step: no one waits
// for them, and an overloaded server would spend its time on answers no one reads. Called
// without the lock (the search is its caller's while search.running is set).
void TranslationService::drop_cancelled(Search& search) {
  search.tags.clear();
  for (auto it = search.decoding.begin(); it != search.decoding.end();) {
    if (!it->second.job->cancelled) {
      ++it;
      continue;
    }
    search.tags.push_back(it->first);
    it = search.decoding.erase(it);
  }
  search.translator->remove(search.index, search.tags);
  decoding_sentences_ -= search.tags.size();
  metrics_.dropped(search.tags.size());
}

// A decoding thread: turns of its search, whenever no request's thread is taking them.
void TranslationService::decode_loop(Search& search) {
  // OpenMP's thread count is per thread: this thread's products run on it alone (left at
  // the core count, every small product woke a team of all cores).
  omp_set_num_threads(1);
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] {
      return !search.running &&
             (stopping_ || !search.decoding.empty() || !queue_.empty() || !score_queue_.empty());
    });
    search.running = true;
    bool worked = true;
    try {
      worked = turn(search, lock);
    } catch (const std::exception& e) {  // out of memory outside a decoder step (whose errors fail its requests)
      if (!lock.owns_lock()) lock.lock();
      std::cerr << "rnnsearch serve: decoding thread " << search.index << ": " << e.what() << '\n';
    }
    search.running = false;
    if (!worked && stopping_) return;
  }
}

void TranslationService::score_job(ScoreJob& job) {
  if (job.cancelled) return;
  std::lock_guard<std::mutex> lock(score_mutex_);  // the Scorers' and the Aligner's workspaces
  try {
    job.work();
    job.done.set_value();
  } catch (...) {
    job.done.set_exception(std::current_exception());
  }
}

std::string TranslationService::metrics_text() const {
  size_t sentences = 0, requests = 0, decoding = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::set<const Job*> jobs;
    for (const Item& item : queue_) jobs.insert(item.job.get());
    sentences = queue_.size();
    requests = jobs.size() + score_queue_.size();
    decoding = decoding_sentences_;
  }
  return metrics_.text(sentences, requests, decoding);
}

}  // namespace rnnsearch::serve
