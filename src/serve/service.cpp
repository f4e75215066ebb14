#include "rnnsearch/serve/service.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <future>
#include <iostream>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "rnnsearch/error.h"
#include "rnnsearch/eval/heatmap.h"
#include "rnnsearch/text/tokenizer.h"
#include "rnnsearch/util/cpu.h"

namespace rnnsearch::serve {

using nlohmann::json;
using nlohmann::ordered_json;

// ---- Requests -------------------------------------------------------------------------

namespace {

// The parsed body: an object whose fields are all among `known`.
json parse_object(const std::string& body, const std::set<std::string>& known) {
  if (!is_valid_utf8(body)) throw RequestError(400, "the body is not valid UTF-8");
  json value;
  try {
    value = json::parse(body);
  } catch (const json::exception& e) {
    throw RequestError(400, std::string("malformed JSON: ") + e.what());
  }
  if (!value.is_object()) throw RequestError(400, "the body must be a JSON object");
  for (const auto& field : value.items())
    if (!known.count(field.key())) throw RequestError(400, "unknown field '" + field.key() + "'");
  return value;
}

// "text" or ["text", ...]: the sentences, and whether they came as a list.
std::vector<std::string> sentences_of(const json& body, const std::string& field, int max_sentences, bool& list) {
  if (!body.contains(field)) throw RequestError(400, "'" + field + "' is missing");
  const json& value = body[field];
  list = value.is_array();
  if (value.is_string()) return {value.get<std::string>()};
  if (!list) throw RequestError(400, "'" + field + "' must be a string or a list of strings");
  if (value.size() > static_cast<size_t>(max_sentences))
    throw RequestError(413, "'" + field + "' holds " + std::to_string(value.size()) + " sentences; the limit is " +
                                std::to_string(max_sentences) + " (--max-sentences)");
  std::vector<std::string> sentences;
  for (const json& item : value) {
    if (!item.is_string()) throw RequestError(400, "'" + field + "' must be a string or a list of strings");
    sentences.push_back(item.get<std::string>());
  }
  return sentences;
}

int integer_field(const json& body, const std::string& field, int fallback, int minimum, int maximum) {
  if (!body.contains(field)) return fallback;
  const json& value = body[field];
  if (!value.is_number_integer()) throw RequestError(400, "'" + field + "' must be an integer");
  const long long number = value.get<long long>();
  if (number < minimum || number > maximum)
    throw RequestError(400, "'" + field + "' must be in [" + std::to_string(minimum) + ", " + std::to_string(maximum) +
                                "], not " + std::to_string(number));
  return static_cast<int>(number);
}

bool bool_field(const json& body, const std::string& field) {
  if (!body.contains(field)) return false;
  if (!body[field].is_boolean()) throw RequestError(400, "'" + field + "' must be true or false");
  return body[field].get<bool>();
}

AlignmentFormat alignment_field(const json& body) {
  if (!body.contains("alignment")) return AlignmentFormat::none;
  const json& value = body["alignment"];
  if (value.is_string()) {
    const std::string name = value.get<std::string>();
    if (name == "none" || name == "hard" || name == "soft") return parse_alignment_format(name);
  }
  throw RequestError(400, "'alignment' must be \"none\", \"hard\" or \"soft\"");
}

// Pharaoh "s-t s-t" (what `translate --alignment hard` prints) as [[s, t], ...].
ordered_json pairs_of(const std::string& pharaoh) {
  ordered_json pairs = ordered_json::array();
  std::istringstream in(pharaoh);
  for (std::string pair; in >> pair;) {
    const size_t dash = pair.find('-');
    pairs.push_back({std::stoi(pair.substr(0, dash)), std::stoi(pair.substr(dash + 1))});
  }
  return pairs;
}

// The tokens, score and attention of `translate --format json` or `score --format json`
// for one record, and the alignment in the requested form.
ordered_json record_fields(const TranslationRecord& record, AlignmentFormat format) {
  ordered_json fields = record_object(record);
  if (format == AlignmentFormat::hard)
    fields["alignment"] = pairs_of(alignment_text(record.alignment, AlignmentFormat::hard));
  else if (format == AlignmentFormat::none)
    fields.erase("alignment");
  return fields;
}

void check_at_least_one(int value, const char* option) {
  if (value < 1) throw Error(std::string("--") + option + " must be at least 1, not " + std::to_string(value));
}

}  // namespace

size_t TranslationService::max_tokens_check(const std::string& text, const std::string& field) const {
  if (!is_valid_utf8(text)) throw RequestError(400, field + " is not valid UTF-8");
  const size_t tokens = tokenize(text, models_.front().tokenizer).size();
  if (tokens > static_cast<size_t>(options_.max_tokens))
    throw RequestError(413, field + " has " + std::to_string(tokens) + " tokens; the limit is " +
                                std::to_string(options_.max_tokens) + " (--max-tokens)");
  return tokens;
}

TranslateRequest TranslationService::parse_translate_request(const std::string& body) const {
  const json value = parse_object(
      body, {"q", "beam_size", "n_best", "normalize", "alignment", "replace_unk", "detokenize", "heatmap"});
  TranslateRequest request;
  request.sentences = sentences_of(value, "q", options_.max_sentences, request.list);
  for (size_t k = 0; k < request.sentences.size(); ++k)
    max_tokens_check(request.sentences[k], request.list ? "q[" + std::to_string(k) + "]" : "q");
  request.beam.beam_size = integer_field(value, "beam_size", 5, 1, options_.max_beam_size);
  request.n_best = integer_field(value, "n_best", 0, 0, request.beam.beam_size);
  request.beam.n_best = std::max(request.n_best, 1);
  if (value.contains("normalize")) {
    const json& normalize = value["normalize"];
    if (!normalize.is_number() || !std::isfinite(normalize.get<double>()) || normalize.get<double>() < 0)
      throw RequestError(400, "'normalize' must be a number >= 0");
    request.beam.normalize = normalize.get<double>();
  }
  request.alignment = alignment_field(value);
  request.replace_unk = bool_field(value, "replace_unk");
  request.detokenize = bool_field(value, "detokenize");
  request.heatmap = bool_field(value, "heatmap");
  // As translate: the attention is kept when an output shows it or --replace-unk uses it.
  request.beam.alignment = request.alignment != AlignmentFormat::none || request.replace_unk || request.heatmap;
  return request;
}

ScoreRequest TranslationService::parse_score_request(const std::string& body) const {
  const json value = parse_object(body, {"src", "tgt", "alignment"});
  ScoreRequest request;
  bool tgt_list = false;
  request.src = sentences_of(value, "src", options_.max_sentences, request.list);
  request.tgt = sentences_of(value, "tgt", options_.max_sentences, tgt_list);
  if (request.list != tgt_list || request.src.size() != request.tgt.size())
    throw RequestError(400, "'src' and 'tgt' must both be strings or lists of the same length");
  for (size_t k = 0; k < request.src.size(); ++k) {
    const std::string index = request.list ? "[" + std::to_string(k) + "]" : "";
    max_tokens_check(request.src[k], "src" + index);
    max_tokens_check(request.tgt[k], "tgt" + index);
  }
  request.alignment = alignment_field(value);
  return request;
}

// ---- Decoding -------------------------------------------------------------------------

struct TranslationService::Job {
  DecodeKey key;
  std::vector<std::string> sentences;  // a copy: a request that times out returns at once
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

struct TranslationService::ScoreJob {
  ScoreRequest request;
  std::vector<ScoredPair> pairs;
  Clock::time_point arrived = Clock::now();
  std::atomic<bool> cancelled{false};  // timed out: set with the job taken out of the queue
  std::promise<void> done;
};

// One continuous beam search per --threads (Translator's search `index`, one OpenMP thread
// each), run by its decoding thread, or, when the server is idle, by the thread of the
// request that found it so (translate()): whoever set `running`. Its state lives here, not
// in a thread's locals, so that either can take a turn and the other go on from there.
struct TranslationService::Search {
  explicit Search(int index) : index(index) {}
  const int index;
  bool running = false;                       // a thread is taking a turn (under mutex_)
  std::shared_ptr<Translator> translator;     // of `key`, the options of the sentences decoding here
  DecodeKey key{};
  std::unordered_map<size_t, Item> decoding;  // the sentences in the search, by tag
  size_t next_tag = 0;
  // a turn's workspace
  std::vector<Item> admitted, leaving;
  std::vector<std::string> lines;
  std::vector<size_t> tags;
  std::vector<Translator::Finished> done;
  std::vector<const Job*> requests;
};

bool TranslationService::DecodeKey::operator<(const DecodeKey& o) const {
  return std::tie(beam_size, n_best, normalize, attention, replace_unk) <
         std::tie(o.beam_size, o.n_best, o.normalize, o.attention, o.replace_unk);
}

TranslationService::TranslationService(const std::vector<Model>& models, const ServiceOptions& options)
    : models_(models), options_(options) {
  if (models.empty()) throw Error("serve needs a model");
  tokenizer_ = models.front().tokenizer;
  check_at_least_one(options.batch_size, "batch-size");
  check_at_least_one(options.max_sentences, "max-sentences");
  check_at_least_one(options.max_tokens, "max-tokens");
  check_at_least_one(options.max_beam_size, "max-beam-size");
  check_at_least_one(options.timeout_ms, "timeout-ms");
  check_at_least_one(options.max_queue, "max-queue");
  check_at_least_one(options.threads, "threads");
  if (options.batch_wait_ms < 0) throw Error("--batch-wait-ms must be at least 0");
  ScorerOptions sopts;
  sopts.batch_size = options.batch_size;
  sopts.max_length = options.max_tokens;
  sopts.threads = options.threads;
  scorer_ = std::make_unique<Scorer>(models.front(), ensemble_weights(models), sopts);
  sopts.alignment = true;
  aligning_scorer_ = std::make_unique<Scorer>(models.front(), ensemble_weights(models), sopts);
  std::unique_lock<std::mutex> lock(mutex_);
  translator({5, 1, 1.0, false, false}, lock);  // the default options' Translator, made before the first request
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

// A Translator per set of decoding options, as `translate` makes one per run; the few most
// recently used are kept (with --precision int8 or bf16 each holds its converted projection;
// a search keeps the one it uses alive). Called with `lock` (of mutex_) held; a new one is
// made with it released (converting the projection takes milliseconds, during which the
// queue's lock held every request and search waiting).
std::shared_ptr<Translator> TranslationService::translator(const DecodeKey& key, std::unique_lock<std::mutex>& lock) {
  constexpr size_t kKept = 8;
  const auto kept = [&]() -> std::shared_ptr<Translator> {
    auto found = std::find_if(translators_.begin(), translators_.end(), [&](const auto& t) { return t.first == key; });
    if (found == translators_.end()) return nullptr;
    std::rotate(found, found + 1, translators_.end());
    return translators_.back().second;
  };
  if (auto translator = kept()) return translator;
  TranslatorOptions topts;
  topts.beam.beam_size = key.beam_size;
  topts.beam.n_best = key.n_best;
  topts.beam.normalize = key.normalize;
  topts.beam.alignment = key.attention;
  topts.replace_unk = key.replace_unk;
  topts.batch_size = options_.batch_size;
  topts.max_length = options_.max_tokens;
  topts.threads = options_.threads;
  topts.precision = options_.precision;
  lock.unlock();
  auto made = std::make_shared<Translator>(models_.front(), ensemble_weights(models_), topts);
  lock.lock();
  if (auto translator = kept()) return translator;  // another search made one meanwhile
  if (translators_.size() == kKept) translators_.erase(translators_.begin());
  translators_.emplace_back(key, std::move(made));
  return translators_.back().second;
}

std::vector<LineTranslation> TranslationService::translate(const TranslateRequest& request) {
  if (request.sentences.empty()) return {};
  auto job = std::make_shared<Job>();
  job->key = {request.beam.beam_size, request.beam.n_best, request.beam.normalize, request.beam.alignment,
              request.replace_unk};
  job->sentences = request.sentences;
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
  // thread and being woken by it added ~0.2 ms to a lone request, and ran it on whichever
  // thread woke first, its caches cold (docs/serve.md). The thread takes the turns of an
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
  auto job = std::make_shared<ScoreJob>();
  job->request = request;
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
  return std::move(job->pairs);
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
    search.translator = translator(search.key, lock);
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
  search.tags.clear();
  for (Item& item : search.admitted) {
    search.lines.push_back(item.job->sentences[item.index]);
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
    if (!search.lines.empty()) search.translator->add(search.index, search.lines, search.tags, done);
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
  std::lock_guard<std::mutex> lock(score_mutex_);  // the Scorers' workspaces
  try {
    const ScoreRequest& r = job.request;
    job.pairs = (r.alignment != AlignmentFormat::none ? aligning_scorer_ : scorer_)->score(r.src, r.tgt, 0);
    job.done.set_value();
  } catch (...) {
    job.done.set_exception(std::current_exception());
  }
}

// ---- Responses ------------------------------------------------------------------------

ordered_json TranslationService::translate_json(const TranslateRequest& request,
                                                const std::vector<LineTranslation>& results) const {
  // The text of one hypothesis, as translate prints it (OutputPrinter).
  const auto text_of = [&](const Hypothesis& h) { return output_text(h.words, tokenizer_, request.detokenize); };
  ordered_json translations = ordered_json::array();
  for (const LineTranslation& t : results) {
    ordered_json entry;
    entry["translation"] = t.hypotheses.empty() ? "" : text_of(t.hypotheses.front());
    entry["score"] = t.hypotheses.empty() ? 0.0 : t.hypotheses.front().score;
    entry["source"] = t.source_pieces.empty() ? t.source : t.source_pieces;
    ordered_json hypotheses = ordered_json::array();
    for (const Hypothesis& h : t.hypotheses) {
      const TranslationRecord record = OutputPrinter::record(t, h);
      ordered_json fields = record_fields(record, request.alignment);
      ordered_json hypothesis;
      hypothesis["translation"] = text_of(h);
      hypothesis["target"] = fields["target"];
      hypothesis["score"] = fields["score"];
      if (fields.contains("alignment")) hypothesis["alignment"] = fields["alignment"];
      if (request.heatmap) hypothesis["heatmap_svg"] = heatmap_svg(record);
      hypotheses.push_back(std::move(hypothesis));
    }
    entry["hypotheses"] = std::move(hypotheses);
    if (!t.warning.empty()) entry["warning"] = t.warning;
    translations.push_back(std::move(entry));
  }
  return {{"translations", std::move(translations)}};
}

// log_prob and perplexity as `score` prints them: perplexity = exp(−logprob / (tokens + 1)).
ordered_json TranslationService::score_json(const ScoreRequest& request, const std::vector<ScoredPair>& pairs) const {
  ordered_json scores = ordered_json::array();
  for (const ScoredPair& pair : pairs) {
    ordered_json fields = record_fields(OutputPrinter::record(pair), request.alignment);
    ordered_json entry;
    entry["log_prob"] = pair.scored() ? fields["score"] : ordered_json(nullptr);
    entry["perplexity"] = pair.scored()
                              ? ordered_json(std::exp(-pair.log_prob / static_cast<double>(pair.target.size() + 1)))
                              : ordered_json(nullptr);
    entry["source"] = fields["source"];
    entry["target"] = fields["target"];
    if (fields.contains("alignment") && pair.scored()) entry["alignment"] = fields["alignment"];
    if (!pair.warning.empty()) entry["warning"] = pair.warning;
    scores.push_back(std::move(entry));
  }
  return {{"scores", std::move(scores)}};
}

ordered_json TranslationService::info() const {
  ordered_json models = ordered_json::array();
  for (const Model& model : models_) {
    json config = model.config;
    models.push_back({{"weights", model.weights_path},
                      {"parameters", model.params.values().size()},
                      {"config", config}});
  }
  const Model& model = models_.front();
  return {{"version", options_.version},
          {"models", std::move(models)},
          {"ensemble", models_.size() > 1},
          {"source_vocabulary", model.src_vocab.size()},
          {"target_vocabulary", model.tgt_vocab.size()},
          {"subwords", model.uses_subwords()},
          {"lowercase", model.tokenizer.lowercase},
          {"precision", precision_name(options_.precision)},
          {"cpu", describe(cpu_features())},
          {"batching", {{"batch_size", options_.batch_size}, {"batch_wait_ms", options_.batch_wait_ms},
                        {"threads", options_.threads}}},
          {"limits", {{"max_sentences", options_.max_sentences}, {"max_tokens", options_.max_tokens},
                      {"max_beam_size", options_.max_beam_size}, {"timeout_ms", options_.timeout_ms},
                      {"max_queue", options_.max_queue}}}};
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

// ---- Metrics --------------------------------------------------------------------------

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

std::string json_body(const ordered_json& value) {
  return value.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

std::string error_body(const std::string& message) { return json_body(ordered_json{{"error", message}}); }

}  // namespace rnnsearch::serve
