#include "rnnsearch/train/trainer.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/model/model_io.h"
#include "rnnsearch/model/rnnsearch.h"
#include "rnnsearch/text/batcher.h"
#include "rnnsearch/text/corpus.h"
#include "rnnsearch/util/profile.h"

namespace rnnsearch {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxNonFiniteInARow = 10;

volatile std::sig_atomic_t g_stop_signal = 0;
void request_stop(int signal) { g_stop_signal = signal; }

// splitmix64: decorrelated seeds for (run seed, epoch) and (run seed, update, shard).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The model directory, created if needed (train.log is opened before anything else).
const std::string& created_directory(const std::string& dir) {
  std::filesystem::create_directories(dir);
  return dir;
}

uint32_t file_crc32(const std::string& path) {
  const std::string bytes = read_file(path);
  return static_cast<uint32_t>(
      ::crc32(::crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

std::string clock_text(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  return buffer;
}

// Log lines go to stderr and DIR/train.log; on a terminal the progress is one live line.
class Logger {
 public:
  explicit Logger(const std::string& path) : file_(path, std::ios::app), tty_(::isatty(2)) {}
  void line(const std::string& text) {
    if (live_) std::cerr << "\r\033[K";
    live_ = false;
    std::cerr << text << std::endl;
    file_ << text << std::endl;
  }
  // Every update on a terminal; a plain line every `every` updates otherwise.
  void progress(const std::string& text, long update, long every) {
    if (tty_) {
      std::cerr << "\r\033[K" << text << std::flush;
      live_ = true;
    } else if (update % every == 0) {
      line(text);
    } else {
      return;
    }
    if (tty_ && update % every == 0) file_ << text << std::endl;
  }

 private:
  std::ofstream file_;
  bool tty_;
  bool live_ = false;
};

// What resuming needs besides the weights and the optimizer moments.
struct Progress {
  long update = 0;
  int epoch = 1;               // 1-based, the epoch in progress
  long batch_in_epoch = 0;     // batches of this epoch already done
  double train_seconds = 0;
  double best_valid_cost = INFINITY;  // per-token cost
  long best_update = 0;
  int validations_without_improvement = 0;
  uint64_t seed = 1;
  // CRC-32 of the model.npz and optimizer.npz this progress belongs to: each file is written
  // atomically, but a crash between two of them would leave a set from different updates.
  uint32_t model_crc = 0, optimizer_crc = 0;
};

void to_json(nlohmann::json& j, const Progress& p) {
  j = {{"update", p.update},
       {"epoch", p.epoch},
       {"batch_in_epoch", p.batch_in_epoch},
       {"train_seconds", p.train_seconds},
       {"best_valid_cost", std::isfinite(p.best_valid_cost) ? nlohmann::json(p.best_valid_cost) : nlohmann::json()},
       {"best_update", p.best_update},
       {"validations_without_improvement", p.validations_without_improvement},
       {"seed", p.seed},
       {"model_crc32", p.model_crc},
       {"optimizer_crc32", p.optimizer_crc}};
}

void from_json(const nlohmann::json& j, Progress& p) {
  p.update = j.at("update").get<long>();
  p.epoch = j.at("epoch").get<int>();
  p.batch_in_epoch = j.at("batch_in_epoch").get<long>();
  p.train_seconds = j.at("train_seconds").get<double>();
  p.best_valid_cost = j.at("best_valid_cost").is_null() ? INFINITY : j.at("best_valid_cost").get<double>();
  p.best_update = j.at("best_update").get<long>();
  p.validations_without_improvement = j.at("validations_without_improvement").get<int>();
  p.seed = j.at("seed").get<uint64_t>();
  p.model_crc = j.at("model_crc32").get<uint32_t>();
  p.optimizer_crc = j.at("optimizer_crc32").get<uint32_t>();
}

// One workspace and gradient buffer per thread; a batch is dealt out round-robin so that
// the shards of a length-sorted batch get similar lengths.
class ShardedModel {
 public:
  ShardedModel(const ModelConfig& config, int threads) {
    for (int t = 0; t < threads; ++t) shards_.push_back(std::make_unique<Shard>(config));
  }

  // Σ −log p over the batch's target tokens; with grads, also sets grads to the gradient
  // of the per-token cost (sum / target tokens).
  double run(const Parameters<float>& params, const ParallelCorpus& corpus, const std::vector<uint32_t>& ids,
             const DropoutOptions& dropout, Parameters<float>* grads) {
    const int count = static_cast<int>(std::min(shards_.size(), ids.size()));
    long tokens = 0;
    std::optional<profile::ScopedPhase> phase(std::in_place, profile::Phase::batching);
    for (int t = 0; t < count; ++t) {
      Shard& shard = *shards_[t];
      std::vector<std::vector<int>> src, tgt;
      std::vector<uint32_t> shard_ids;
      for (size_t k = t; k < ids.size(); k += count) {
        src.push_back(corpus.src[ids[k]]);
        tgt.push_back(corpus.tgt[ids[k]]);
        shard_ids.push_back(ids[k]);
      }
      shard.batch = pad_batch(src, tgt, shard_ids);
      tokens += shard.batch.target_tokens();
    }
    phase.reset();
    double cost = 0;
#pragma omp parallel for num_threads(count) schedule(static, 1) reduction(+ : cost)
    for (int t = 0; t < count; ++t) {
      Shard& shard = *shards_[t];
      DropoutOptions shard_dropout = dropout;
      shard_dropout.seed = mix(dropout.seed + static_cast<uint64_t>(t));
      if (grads) {
        Parameters<float>& g = t == 0 ? *grads : shard.grads;
        g.set_zero();
        cost += rnnsearch_forward_backward<float>(params, shard.batch, shard_dropout,
                                                  1.0f / static_cast<float>(tokens), shard.workspace, g);
      } else {
        cost += rnnsearch_forward<float>(params, shard.batch, shard_dropout, shard.workspace);
      }
    }
    if (grads) sum_into(*grads, count);
    last_tokens_ = tokens;
    return cost;
  }
  long last_tokens() const { return last_tokens_; }

 private:
  struct Shard {
    explicit Shard(const ModelConfig& config) : grads(config) {}
    Batch batch;
    ModelWorkspace<float> workspace;
    Parameters<float> grads;
  };

  void sum_into(Parameters<float>& total, int count) {
    profile::ScopedPhase phase(profile::Phase::gradient_sum);
    const long size = static_cast<long>(total.values().size());
    float* out = total.values().data();
    for (int t = 1; t < count; ++t) {
      const float* in = shards_[t]->grads.values().data();
#pragma omp parallel for simd schedule(static)
      for (long k = 0; k < size; ++k) out[k] += in[k];
    }
  }

  std::vector<std::unique_ptr<Shard>> shards_;
  long last_tokens_ = 0;
};

nlohmann::json training_json(const TrainOptions& o) {
  return {{"train_src", o.train_src},
          {"train_tgt", o.train_tgt},
          {"valid_src", o.valid_src},
          {"valid_tgt", o.valid_tgt},
          {"batch_size", o.batch_size},
          {"optimizer", o.optimizer.kind == OptimizerKind::adam ? "adam" : "sgd"},
          {"lr", o.optimizer.lr},
          {"clip_norm", o.clip_norm},
          {"dropout", o.dropout},
          {"seed", o.seed},
          {"shuffle", o.shuffle},
          {"min_count", o.min_count},
          {"max_length", o.max_length}};
}

// The throughput window of --bench-seconds, counted like the reference's train.py.
struct BenchWindow {
  Clock::time_point start;
  long updates = 0, sentences = 0, src_tokens = 0, tgt_tokens = 0;

  // Returns the BENCH line once the window is full, else "".
  std::string add(const std::vector<uint32_t>& batch, const ParallelCorpus& corpus, double seconds_wanted) {
    ++updates;
    sentences += static_cast<long>(batch.size());
    for (uint32_t id : batch) {
      src_tokens += static_cast<long>(corpus.src[id].size());
      tgt_tokens += static_cast<long>(corpus.tgt[id].size());
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (elapsed < seconds_wanted) return "";
    char line[256];
    std::snprintf(line, sizeof line,
                  "BENCH updates=%ld sents=%ld src_tok=%ld tgt_tok=%ld seconds=%.2f tgt_tok/s=%.1f "
                  "src+tgt_tok/s=%.1f sents/s=%.1f updates/s=%.3f",
                  updates, sentences, src_tokens, tgt_tokens, elapsed, tgt_tokens / elapsed,
                  (src_tokens + tgt_tokens) / elapsed, sentences / elapsed, updates / elapsed);
    return line;
  }
};

// The trainer's state and its steps; train() below is the loop that drives them.
class Trainer {
 public:
  explicit Trainer(const TrainOptions& options)
      : o_(options), dir_(created_directory(options.model_dir)), log_(model_file(dir_, "train.log")) {}

  int run();

 private:
  std::string path(const char* name) const { return model_file(dir_, name); }
  void set_up();
  void validate_and_save(bool epoch_end);
  void save_checkpoint();
  bool budget_exhausted() const;
  bool train_update(const std::vector<uint32_t>& batch, long batch_index);
  bool after_update(bool finite, const std::vector<uint32_t>& batch);
  std::string progress_text(double cost_sum, long tokens, double window_seconds) const;

  const TrainOptions& o_;
  std::string dir_;
  Logger log_;
  ModelConfig config_;
  Vocab src_vocab_, tgt_vocab_;
  ParallelCorpus train_, valid_;
  std::unique_ptr<Parameters<float>> params_, grads_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<ShardedModel> model_;
  Progress progress_;
  long saved_update_ = -1;  // the update of the last checkpoint on disk
  bool stop_for_patience_ = false;
  int non_finite_in_a_row_ = 0;
  struct {
    double cost = 0, seconds = 0;
    long tokens = 0;
  } window_;                            // since the last log line
  std::unique_ptr<BenchWindow> bench_;  // --bench-seconds, after the warm-up
};

void Trainer::set_up() {
  const bool resume = std::filesystem::exists(path("progress.json"));
  if (o_.require_resume && !resume) throw Error(located(path("progress.json"), 0, "--resume: no run to resume"));
  if (resume) {
    const nlohmann::json config = read_json_file(path("config.json"));
    try {
      config_ = config.at("model").get<ModelConfig>();
    } catch (const std::exception& e) {
      throw Error(located(path("config.json"), 0, e.what()));
    }
    src_vocab_ = Vocab::load(path("vocab.src"));
    tgt_vocab_ = Vocab::load(path("vocab.tgt"));
  } else {
    if (!o_.vocab_src.empty() != !o_.vocab_tgt.empty())
      throw Error("--vocab-src and --vocab-tgt go together");
    src_vocab_ = o_.vocab_src.empty() ? Vocab::build(read_tokenized(o_.train_src, o_.tokenizer), o_.min_count)
                                      : Vocab::load(o_.vocab_src);
    tgt_vocab_ = o_.vocab_tgt.empty() ? Vocab::build(read_tokenized(o_.train_tgt, o_.tokenizer), o_.min_count)
                                      : Vocab::load(o_.vocab_tgt);
    config_ = o_.model;
    config_.src_vocab = static_cast<int>(src_vocab_.size());
    config_.tgt_vocab = static_cast<int>(tgt_vocab_.size());
    src_vocab_.save(path("vocab.src"));
    tgt_vocab_.save(path("vocab.tgt"));
    write_json_file(path("config.json"), model_config_json(config_, o_.tokenizer, training_json(o_)));
  }
  train_ = read_parallel_corpus(o_.train_src, o_.train_tgt, src_vocab_, tgt_vocab_, o_.tokenizer, o_.max_length);
  valid_ = read_parallel_corpus(o_.valid_src, o_.valid_tgt, src_vocab_, tgt_vocab_, o_.tokenizer, 0);
  if (train_.size() == 0) throw Error(located(o_.train_src, 0, "no usable training pairs"));
  if (valid_.size() == 0) throw Error(located(o_.valid_src, 0, "no usable validation pairs"));
  log_.line("train: " + std::to_string(train_.size()) + " pairs (" + std::to_string(train_.skipped_empty) +
            " empty and " + std::to_string(train_.skipped_too_long) + " longer than " +
            std::to_string(o_.max_length) + " tokens skipped); valid: " + std::to_string(valid_.size()) +
            " pairs; vocabularies " + std::to_string(config_.src_vocab) + " / " + std::to_string(config_.tgt_vocab));

  params_ = std::make_unique<Parameters<float>>(config_);
  grads_ = std::make_unique<Parameters<float>>(config_);
  optimizer_ = std::make_unique<Optimizer>(o_.optimizer, params_->values().size());
  model_ = std::make_unique<ShardedModel>(config_, o_.threads);
  if (resume) {
    try {
      progress_ = read_json_file(path("progress.json")).get<Progress>();
    } catch (const nlohmann::json::exception& e) {
      throw Error(located(path("progress.json"), 0, e.what()));
    }
    for (const auto& [file, crc] : {std::pair{"model.npz", progress_.model_crc}, {"optimizer.npz", progress_.optimizer_crc}})
      if (file_crc32(path(file)) != crc)
        throw Error(located(path(file), 0,
                            "is not the file progress.json was saved with (interrupted while saving a checkpoint?); "
                            "model.best.npz holds the best weights, --init-from it to start again"));
    load_weights(path("model.npz"), *params_);
    optimizer_->load(path("optimizer.npz"));
    if (optimizer_->steps() != progress_.update)
      throw Error(located(path("optimizer.npz"), 0,
                          "is at update " + std::to_string(optimizer_->steps()) + " but progress.json at " +
                              std::to_string(progress_.update) + " (interrupted while saving?)"));
    log_.line("resuming at update " + std::to_string(progress_.update) + ", epoch " + std::to_string(progress_.epoch) +
              ", " + clock_text(progress_.train_seconds) + " trained");
  } else {
    params_->init_uniform(0.1, o_.seed);
    if (!o_.init_from.empty()) {
      load_weights(o_.init_from, *params_);
      log_.line("initialised from " + o_.init_from);
    }
    progress_.seed = o_.seed;
  }
  if (resume) saved_update_ = progress_.update;
  log_.line("model: e=" + std::to_string(config_.emb) + " n=" + std::to_string(config_.hidden) +
            " l=" + std::to_string(config_.maxout) + " output=" + output_kind_name(config_.output) + ", " +
            std::to_string(params_->values().size()) + " parameters; batch " + std::to_string(o_.batch_size) +
            ", " + std::to_string(o_.threads) + " thread(s)");
}

bool Trainer::budget_exhausted() const {
  return (o_.max_updates > 0 && progress_.update >= o_.max_updates) ||
         (o_.max_minutes > 0 && progress_.train_seconds >= o_.max_minutes * 60) ||
         (o_.max_epochs > 0 && progress_.epoch > o_.max_epochs) || stop_for_patience_;
}

void Trainer::save_checkpoint() {
  save_weights(path("model.npz"), *params_);
  optimizer_->save(path("optimizer.npz"));
  progress_.model_crc = file_crc32(path("model.npz"));
  progress_.optimizer_crc = file_crc32(path("optimizer.npz"));
  write_json_file(path("progress.json"), progress_);
  saved_update_ = progress_.update;
}

// Per-token validation cost (perplexity = exp of it); saves the checkpoint, and
// model.best.npz when the cost improved.
void Trainer::validate_and_save(bool epoch_end) {
  const auto batches = make_batches(valid_, o_.batch_size, false, 0);
  double cost = 0;
  long tokens = 0;
  for (const auto& ids : batches) {
    cost += model_->run(*params_, valid_, ids, {}, nullptr);
    tokens += model_->last_tokens();
  }
  const double per_token = cost / static_cast<double>(tokens);
  const bool improved = per_token < progress_.best_valid_cost;
  if (improved) {
    progress_.best_valid_cost = per_token;
    progress_.best_update = progress_.update;
    progress_.validations_without_improvement = 0;
    save_weights(path("model.best.npz"), *params_);
  } else if (++progress_.validations_without_improvement >= o_.patience && o_.patience > 0) {
    stop_for_patience_ = true;
  }
  save_checkpoint();
  std::ostringstream line;
  line.precision(4);
  line << "valid " << (epoch_end ? "(end of epoch " + std::to_string(progress_.epoch - 1) + ") " : "")
       << "update " << progress_.update << " cost " << per_token << " ppl " << std::exp(per_token)
       << (improved ? " (new best, saved model.best.npz)"
                    : " (best " + std::to_string(std::exp(progress_.best_valid_cost)) + " at update " +
                          std::to_string(progress_.best_update) + ")")
       << " train_time " << clock_text(progress_.train_seconds);
  log_.line(line.str());
  if (stop_for_patience_)
    log_.line("early stopping: " + std::to_string(o_.patience) + " validations without improvement");
}

std::string Trainer::progress_text(double cost_sum, long tokens, double window_seconds) const {
  const double cost = cost_sum / std::max(1L, tokens);
  double eta = -1;  // against the tightest budget
  if (o_.max_minutes > 0) eta = o_.max_minutes * 60 - progress_.train_seconds;
  if (o_.max_updates > 0 && progress_.update > 0) {
    const double by_updates = (o_.max_updates - progress_.update) * progress_.train_seconds / progress_.update;
    eta = eta < 0 ? by_updates : std::min(eta, by_updates);
  }
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, "update %ld epoch %d cost %.3f ppl %.2f tgt_tok/s %.0f elapsed %s%s%s",
                progress_.update, progress_.epoch, cost, std::exp(cost), tokens / std::max(1e-9, window_seconds),
                clock_text(progress_.train_seconds).c_str(), eta >= 0 ? " eta " : "",
                eta >= 0 ? clock_text(eta).c_str() : "");
  return buffer;
}

// One update on one batch: forward, backward, clipping, optimizer step. Returns false (and
// leaves the weights alone) when the cost or the gradient is not finite.
bool Trainer::train_update(const std::vector<uint32_t>& batch, long batch_index) {
  const auto start = Clock::now();
  const DropoutOptions dropout{o_.dropout, mix(progress_.seed ^ mix(progress_.update))};
  const double cost = model_->run(*params_, train_, batch, dropout, grads_.get());
  std::optional<profile::ScopedPhase> phase(std::in_place, profile::Phase::optimizer);
  const double norm = clip_global_norm(grads_->values(), o_.clip_norm);
  const bool finite = std::isfinite(cost) && std::isfinite(norm);
  if (finite) optimizer_->step(params_->values(), grads_->values());
  phase.reset();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  ++progress_.update;
  progress_.batch_in_epoch = batch_index + 1;
  progress_.train_seconds += seconds;
  if (finite) {
    window_.cost += cost;
    window_.tokens += model_->last_tokens();
    window_.seconds += seconds;
  }
  return finite;
}

// Everything between two updates: the progress line, the benchmark window, a stop signal,
// validation. Returns false when the run must end now.
bool Trainer::after_update(bool finite, const std::vector<uint32_t>& batch) {
  if (!finite) {
    log_.line("update " + std::to_string(progress_.update) + ": non-finite cost or gradient, update skipped");
    if (++non_finite_in_a_row_ >= kMaxNonFiniteInARow)
      throw Error(std::to_string(kMaxNonFiniteInARow) +
                  " non-finite costs in a row: training diverged; lower --lr or use --clip-norm "
                  "(the last checkpoint in " + dir_ + " is intact)");
  } else {
    non_finite_in_a_row_ = 0;
  }
  if (o_.bench_seconds > 0) {
    if (!bench_) {
      if (progress_.update >= o_.bench_warmup) {
        bench_ = std::make_unique<BenchWindow>(BenchWindow{Clock::now()});
        profile::reset();
      }
      return true;
    }
    const std::string result = bench_->add(batch, train_, o_.bench_seconds);
    if (result.empty()) return true;
    std::cout << result << std::endl;
    if (profile::enabled()) std::cout << profile::report(bench_->updates);
    return false;
  }
  log_.progress(progress_text(window_.cost, window_.tokens, window_.seconds), progress_.update, o_.log_freq);
  if (progress_.update % o_.log_freq == 0) window_ = {};
  if (g_stop_signal) {
    save_checkpoint();
    log_.line(std::string("stopped by ") + (g_stop_signal == SIGINT ? "SIGINT" : "SIGTERM") + " at update " +
              std::to_string(progress_.update) + "; checkpoint saved, run the same command to resume");
    return false;
  }
  if (o_.valid_freq > 0 && progress_.update % o_.valid_freq == 0) validate_and_save(false);
  return true;
}

int Trainer::run() {
  set_up();
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  if (budget_exhausted()) {
    log_.line("nothing to do: the budget of this run is already used (update " + std::to_string(progress_.update) +
              "); raise --max-updates/--max-minutes/--max-epochs to continue");
    return 0;
  }
  while (!budget_exhausted()) {
    // The order of an epoch depends only on (seed, epoch): a resumed run sees the same one.
    const auto batches =
        make_batches(train_, o_.batch_size, o_.shuffle, mix(progress_.seed * 1000003 + progress_.epoch));
    for (size_t b = progress_.batch_in_epoch; b < batches.size() && !budget_exhausted(); ++b) {
      const bool finite = train_update(batches[b], static_cast<long>(b));
      if (!after_update(finite, batches[b])) return 0;
    }
    if (progress_.batch_in_epoch < static_cast<long>(batches.size())) break;  // budget ran out mid-epoch
    ++progress_.epoch;
    progress_.batch_in_epoch = 0;
    if (o_.bench_seconds > 0) continue;
    if (saved_update_ == progress_.update)
      save_checkpoint();  // validated at this very update already: just record the new epoch
    else
      validate_and_save(true);
  }
  if (saved_update_ != progress_.update) validate_and_save(false);
  if (profile::enabled()) log_.line(profile::report(progress_.update));
  log_.line("done: " + std::to_string(progress_.update) + " updates, " + clock_text(progress_.train_seconds) +
            " training time, best validation perplexity " + std::to_string(std::exp(progress_.best_valid_cost)) +
            " at update " + std::to_string(progress_.best_update));
  return 0;
}

}  // namespace

int train(const TrainOptions& options) { return Trainer(options).run(); }

}  // namespace rnnsearch
