#include "rnnsearch/train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "rnnsearch/error.h"
#include "rnnsearch/io/file_lock.h"
#include "rnnsearch/model/model_io.h"
#include "rnnsearch/text/batcher.h"
#include "rnnsearch/text/corpus.h"
#include "rnnsearch/train/checkpoint.h"
#include "rnnsearch/train/init_from_checks.h"
#include "rnnsearch/train/model_setup.h"
#include "rnnsearch/train/resume_checks.h"
#include "rnnsearch/train/sharded_model.h"
#include "rnnsearch/train/train_log.h"
#include "rnnsearch/train/training_corpus.h"
#include "rnnsearch/train/weight_partition.h"
#include "rnnsearch/util/mpi.h"
#include "rnnsearch/util/profile.h"
#include "rnnsearch/util/seed.h"

namespace rnnsearch {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxNonFiniteInARow = 10;

volatile std::sig_atomic_t g_stop_signal = 0;
void request_stop(int signal) { g_stop_signal = signal; }

// The model directory, created if needed (train.log is opened before anything else).
const std::string& created_directory(const std::string& dir) {
  std::filesystem::create_directories(dir);
  return dir;
}

// In an MPI job rank 0 alone writes to the model directory (docs/design.md §7): it holds the
// lock and the log; the other ranks get a silent log.
std::unique_ptr<FileLock> lock_if_root(const std::string& dir) {
  if (!mpi::is_root()) return nullptr;
  return std::make_unique<FileLock>(model_file(created_directory(dir), model_files::kTrainLock),
                                    "another rnnsearch train is using " + dir);
}

// The same decision on every rank: rank 0's.
bool roots_choice(bool choice) {
  std::string bytes(choice ? "1" : "");
  mpi::broadcast(bytes);
  return !bytes.empty();
}

// Throws `problem` on a rank whose value is not rank 0's: the ranks must agree on what
// decides the batches and the shards.
void check_same_as_root(const std::string& value, const std::string& problem) {
  std::string roots = value;
  mpi::broadcast(roots);
  if (roots != value) throw Error(problem);
}

std::string fingerprint(const ParallelCorpus& corpus) {
  uint64_t hash = corpus.size();
  for (const CorpusSide* side : {&corpus.src, &corpus.tgt})
    for (size_t k = 0; k < side->size(); ++k)
      for (int id : (*side)[k]) hash = mix_seed(hash ^ static_cast<uint64_t>(id));
  return std::to_string(hash);
}

// The trainer's state and its steps; train() below is the loop that drives them.
class Trainer {
 public:
  explicit Trainer(const TrainOptions& options)
      : o_(options),
        dir_(options.model_dir),
        lock_(lock_if_root(dir_)),
        log_(mpi::is_root() ? model_file(dir_, model_files::kTrainLog) : "", options.progress.quiet),
        checkpoints_(dir_) {}

  int run();

 private:
  std::string path(const char* name) const { return model_file(dir_, name); }
  void set_up();
  void validate_and_save(bool epoch_end);
  void gather_optimizer_state();
  void save_checkpoint();
  bool budget_exhausted() const;
  using Batches = std::vector<std::vector<uint32_t>>;
  struct UpdateCost {
    double cost = 0, nll = 0;  // what training minimises; Σ −log p (unsmoothed)
    double guided = 0;         // the guided-alignment part of cost
    long tokens = 0;           // target tokens
  };
  UpdateCost gradient(const Batches& update);
  bool train_update(const Batches& update, long next_batch);
  bool after_update(bool finite, const Batches& update);

  const TrainOptions& o_;
  std::string dir_;
  std::unique_ptr<FileLock> lock_;  // before the log: a refused second trainer must not write to train.log
  TrainLog log_;
  CheckpointSet checkpoints_;
  ModelDefinition model_def_;  // sizes, tokenizer, subword models, vocabularies
  ParallelCorpus train_, valid_;
  std::unique_ptr<Parameters<float>> params_, grads_;
  std::unique_ptr<Validator> validator_;
  std::unique_ptr<WeightPartition> partition_;  // this rank's part of the optimizer step
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<ShardedModel> model_;
  Progress progress_;
  long saved_update_ = -1;  // the update of the last checkpoint on disk
  long state_gathered_at_ = -1;  // the update after which the optimizer's state was last gathered
  bool stop_for_patience_ = false;
  int non_finite_in_a_row_ = 0;
  int stop_signal_ = 0;  // SIGINT or SIGTERM seen by any rank after the last update
  CostWindow window_;                   // since the last progress line
  std::unique_ptr<Benchmark> bench_;    // --bench-seconds
};

void Trainer::set_up() {
  // Each stage of the preparation shows its progress (rank 0's).
  ProgressMeter preparation("rnnsearch train", o_.progress);
  // Rank 0 creates the model definition (vocabularies, subword models, config.json); the
  // other ranks read it once it is there.
  bool resume = false;
  if (mpi::is_root()) {
    checkpoints_.remove_stale_files();
    resume = checkpoints_.exists();
    if (o_.require_resume && !resume) throw Error(located(path(model_files::kProgress), 0, "--resume: no run to resume"));
    // (--init-from's checks before anything is written, and before the corpus is read)
    if (!resume && !o_.init_from.empty()) check_init_from_options(o_.init_from, o_);
    model_def_ = resume ? load_model_definition(dir_) : create_model_definition(o_, dir_, preparation);
    if (resume) {
      check_resumed_text(o_, model_def_, dir_);
      check_resumed_model(o_, model_def_.config, path(model_files::kConfig));
    } else if (!o_.init_from.empty()) {
      check_init_from_text(o_.init_from, model_def_, dir_);
    }
  }
  resume = roots_choice(resume);
  if (!mpi::is_root()) model_def_ = load_model_definition(dir_);
  const ModelDefinition& d = model_def_;
  train_ = training_corpus(o_, dir_, d, log_, preparation);
  preparation.start("reading the validation set");
  valid_ = read_parallel_corpus(o_.valid_src, o_.valid_tgt, d.src_subwords, d.tgt_subwords, d.src_vocab, d.tgt_vocab,
                                d.tokenizer, 0, o_.threads);
  preparation.finish();
  if (train_.size() == 0) throw Error(located(o_.train_src, 0, "no usable training pairs"));
  if (valid_.size() == 0) throw Error(located(o_.valid_src, 0, "no usable validation pairs"));
  const std::string same_corpus = "differs from rank 0's (every rank must read the same corpus)";
  check_same_as_root(fingerprint(train_), located(o_.train_src, 0, same_corpus));
  check_same_as_root(fingerprint(valid_), located(o_.valid_src, 0, same_corpus));
  check_same_as_root(std::to_string(o_.threads), "--threads is " + std::to_string(o_.threads) +
                                                     " here, not as on rank 0: give every rank the same --threads");
  log_.line(data_line(train_, valid_, o_.max_length, model_def_.config));

  validator_ = std::make_unique<Validator>(o_.valid_metrics, o_.valid_src, o_.valid_tgt, d.tokenizer, o_.valid_beam_size,
                                           o_.batch_size, o_.threads, valid_);
  params_ = std::make_unique<Parameters<float>>(model_def_.config);
  grads_ = std::make_unique<Parameters<float>>(model_def_.config);
  partition_ = std::make_unique<WeightPartition>(params_->values().size());
  optimizer_ = std::make_unique<Optimizer>(o_.optimizer, params_->values().size(), partition_->begin(),
                                           partition_->end());
  model_ = std::make_unique<ShardedModel>(model_def_.config, o_.threads, o_.precision);
  if (resume) {
    progress_ = checkpoints_.load(*params_, *optimizer_);
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
  partition_->place(*params_, *grads_);
  if (resume) saved_update_ = progress_.update;
  if (o_.bench_seconds > 0) bench_ = std::make_unique<Benchmark>(o_.bench_seconds, o_.bench_warmup);
  log_.line(model_line(model_def_.config, params_->values().size(), o_.batch_size, o_.threads, o_.precision,
                       partition_->exchange_name()));
}

bool Trainer::budget_exhausted() const {
  return (o_.max_updates > 0 && progress_.update >= o_.max_updates) ||
         (o_.max_minutes > 0 && progress_.train_seconds >= o_.max_minutes * 60) ||
         (o_.max_epochs > 0 && progress_.epoch > o_.max_epochs) || stop_for_patience_;
}

// Each rank keeps only its own part of the optimizer's state current: the parts come
// together before a checkpoint is written or the average validated.
void Trainer::gather_optimizer_state() {
  if (state_gathered_at_ == progress_.update) return;
  state_gathered_at_ = progress_.update;
  for (AlignedVector<float>* state : optimizer_->state()) partition_->share(*state, profile::Phase::state_gather);
}

void Trainer::save_checkpoint() {
  gather_optimizer_state();
  if (mpi::is_root()) checkpoints_.save(*params_, *optimizer_, progress_);
  saved_update_ = progress_.update;
}

// Validates the weights that translate (the average, with --exponential-smoothing); saves
// the checkpoint, and those weights as model.best.npz when the selecting metric improved.
void Trainer::validate_and_save(bool epoch_end) {
  ValidationScores scores;
  bool improved, decayed = false;
  gather_optimizer_state();
  {
    // With --exponential-smoothing the average validates and is saved as the best weights:
    // a Parameters over its buffer (no copy; gathered from the ranks just above).
    AlignedVector<float>* average = optimizer_->average();
    std::optional<Parameters<float>> averaged;
    if (average) averaged.emplace(model_def_.config, average->data());
    const Parameters<float>& weights = averaged ? *averaged : *params_;
    scores = validator_->run(model_def_, weights, *model_);
    improved = scores.cost(o_.valid_metrics.front()) < progress_.best_valid_cost;
    if (improved && mpi::is_root()) save_weights(path(model_files::kBestWeights), weights);
  }
  if (improved) {
    progress_.best_valid_cost = scores.cost(o_.valid_metrics.front());
    progress_.best_update = progress_.update;
    progress_.validations_without_improvement = 0;
  } else {
    const int stalled = ++progress_.validations_without_improvement;
    if (o_.patience > 0 && stalled >= o_.patience) stop_for_patience_ = true;
    decayed = decays_now(o_.lr_schedule, stalled);
    if (decayed) progress_.lr_scale *= o_.lr_schedule.decay;
  }
  save_checkpoint();
  log_.line(validation_line(progress_, scores, o_.valid_metrics.front(), improved, epoch_end));
  if (decayed) {
    std::ostringstream line;
    line << "learning rate decayed: " << progress_.validations_without_improvement
         << " validations without improvement; now " << progress_.lr_scale << " x --lr";
    log_.line(line.str());
  }
  if (stop_for_patience_)
    log_.line("early stopping: " + std::to_string(o_.patience) + " validations without improvement");
}

// Sets grads_ to the gradient of the update's per-token cost and returns its sums. With
// --accumulate N the update has N batches, run one after the other (the memory of one),
// each adding its gradient scaled by 1 / the whole update's target tokens:
//
//   ∇ (Σ_b cost_b / Σ_b tokens_b) = Σ_b ∇ cost_b / Σ_b tokens_b
//
// Each shard adds its batches in its own buffer and the shards are added once (sharded_model.h);
// in an MPI job each rank computes its shards of each batch, and the ranks' parts are added
// once per update, with one exchange however many batches it has.
Trainer::UpdateCost Trainer::gradient(const Batches& update) {
  UpdateCost sums;
  for (const std::vector<uint32_t>& batch : update) sums.tokens += ShardedModel::target_tokens(train_, batch);
  const float scale = 1.0f / static_cast<float>(sums.tokens);
  const uint64_t update_seed = mix_seed(progress_.seed ^ mix_seed(progress_.update));
  for (size_t b = 0; b < update.size(); ++b) {
    Regularization regularization = o_.regularization;
    regularization.seed = b == 0 ? update_seed : mix_seed(update_seed ^ mix_seed(b));
    // Across hosts the ranks start adding the output layer's gradient during the last
    // batch's backward pass (weight_partition.h)
    if (b + 1 == update.size() && partition_->overlaps())
      model_->when_output_layer_done([this](FlatRange span) { partition_->start_sum(grads_->values(), span); });
    sums.cost += model_->add_gradient(*params_, train_, update[b], regularization, scale, *grads_);
    sums.nll += model_->last_nll();
    sums.guided += model_->last_guided_cost();
  }
  model_->sum_gradients(*grads_);
  partition_->sum_gradients(grads_->values());
  double costs[3] = {sums.cost, sums.nll, sums.guided};
  mpi::sum(costs, 3);
  sums.cost = costs[0];
  sums.nll = costs[1];
  sums.guided = costs[2];
  return sums;
}

// One update: forward and backward on its batches, clipping, optimizer step. Returns false
// (and leaves the weights alone) when the cost or the gradient is not finite. next_batch:
// the epoch's batch after the update's.
bool Trainer::train_update(const Batches& update, long next_batch) {
  const auto start = Clock::now();
  const UpdateCost sums = gradient(update);
  std::optional<profile::ScopedPhase> phase(std::in_place, profile::Phase::optimizer);
  const double norm = partition_->gradient_norm(grads_->values());
  const bool finite = std::isfinite(sums.cost) && std::isfinite(norm);
  if (finite) {
    optimizer_->set_lr(scheduled_lr(o_.optimizer.lr, o_.lr_schedule, progress_.update + 1, progress_.lr_scale));
    optimizer_->step(params_->values(), grads_->values(), clip_factor(norm, o_.clip_norm));
    phase.reset();
    partition_->share(params_->values());
  } else {
    ++progress_.skipped_updates;
  }
  phase.reset();
  // The slowest rank's time, and a stop signal any rank saw: every rank takes the same
  // decisions (budget, stop) at the same update.
  double shared[2] = {std::chrono::duration<double>(Clock::now() - start).count(), static_cast<double>(g_stop_signal)};
  mpi::max(shared, 2);
  const double seconds = shared[0];
  stop_signal_ = static_cast<int>(shared[1]);
  ++progress_.update;
  progress_.batch_in_epoch = next_batch;
  progress_.train_seconds += seconds;
  if (finite) {
    window_.cost += sums.nll;  // the perplexity shown is unsmoothed
    window_.guided += sums.guided;
    window_.tokens += sums.tokens;
    window_.seconds += seconds;
  }
  return finite;
}

// Everything between two updates: the progress line, the benchmark window, a stop signal,
// validation. Returns false when the run must end now.
bool Trainer::after_update(bool finite, const Batches& update) {
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
    const std::string result = bench_->after_update(progress_.update, update, train_);
    if (!result.empty() && mpi::is_root()) std::cout << result << std::endl;
    if (!result.empty() && profile::enabled()) log_.line(profile::report(progress_.update));  // warm-up included
    return result.empty();
  }
  log_.progress(progress_line(progress_, window_, o_.max_minutes * 60, o_.max_updates), progress_.update, o_.log_freq);
  if (progress_.update % o_.log_freq == 0) window_ = {};
  if (stop_signal_) {
    save_checkpoint();
    log_.line(std::string("stopped by ") + (stop_signal_ == SIGINT ? "SIGINT" : "SIGTERM") + " at update " +
              std::to_string(progress_.update) + "; checkpoint saved, run the same command to resume");
    return false;
  }
  if (o_.valid_freq > 0 && progress_.update % o_.valid_freq == 0) validate_and_save(false);
  if (o_.save_freq > 0 && progress_.update % o_.save_freq == 0 && saved_update_ != progress_.update) save_checkpoint();
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
        make_batches(train_, o_.batch_size, o_.shuffle, mix_seed(progress_.seed * 1000003 + progress_.epoch));
    for (size_t b = progress_.batch_in_epoch; b < batches.size() && !budget_exhausted();) {
      const size_t next = std::min(batches.size(), b + static_cast<size_t>(o_.accumulate));
      const Batches update(batches.begin() + static_cast<long>(b), batches.begin() + static_cast<long>(next));
      const bool finite = train_update(update, static_cast<long>(next));
      if (!after_update(finite, update)) return 0;
      b = next;
    }
    if (progress_.batch_in_epoch < static_cast<long>(batches.size())) break;  // budget ran out mid-epoch
    ++progress_.epoch;
    progress_.batch_in_epoch = 0;
    // With --valid-freq N the run validates every N updates only (as Marian's): epoch ends
    // are no extra validations, which would count towards --patience and --lr-decay-stalled
    // at a rate that depends on the corpus size. Without it, each epoch end validates.
    if (o_.bench_seconds > 0 || o_.valid_freq > 0) continue;
    if (saved_update_ == progress_.update)
      save_checkpoint();  // validated at this very update already: just record the new epoch
    else
      validate_and_save(true);
  }
  // The run's last validation; an epoch end if its last update ended one
  if (saved_update_ != progress_.update) validate_and_save(progress_.batch_in_epoch == 0);
  if (profile::enabled()) log_.line(profile::report(progress_.update));
  log_.line("done: " + std::to_string(progress_.update) + " updates, " + clock_text(progress_.train_seconds) +
            " training time, best validation " + selection_text(progress_.best_valid_cost, o_.valid_metrics.front()) +
            " at update " + std::to_string(progress_.best_update));
  return 0;
}

}  // namespace

int train(const TrainOptions& options) { return Trainer(options).run(); }

}  // namespace rnnsearch
