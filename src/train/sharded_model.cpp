#include "rnnsearch/train/sharded_model.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <optional>
#include <stdexcept>

#include <omp.h>

#include "rnnsearch/util/mpi.h"
#include "rnnsearch/util/profile.h"
#include "rnnsearch/util/seed.h"

namespace rnnsearch {

ShardedModel::ShardedModel(const ModelConfig& config, int threads, Precision precision)
    : output_span_(output_layer_span(config)) {
  if (precision == Precision::bf16) {
    projection_bf16_ = std::make_unique<Bf16Projection>();
    weights_bf16_ = std::make_unique<Bf16Weights>();
  }
  for (int t = 0; t < threads; ++t) {
    shards_.push_back(std::make_unique<Shard>());
    shards_.back()->workspace.output.bf16 = projection_bf16_.get();
    if (t > 0) shards_.back()->grads = std::make_unique<Parameters<float>>(config);
  }
}

long ShardedModel::target_tokens(const ParallelCorpus& corpus, const std::vector<uint32_t>& ids) {
  long tokens = 0;
  for (uint32_t id : ids) tokens += static_cast<long>(corpus.tgt.length(id));
  return tokens;
}

double ShardedModel::run(const Parameters<float>& params, const ParallelCorpus& corpus,
                         const std::vector<uint32_t>& ids, const Regularization& regularization) {
  return run_batch(params, corpus, ids, regularization, 0, nullptr);
}

double ShardedModel::add_gradient(const Parameters<float>& params, const ParallelCorpus& corpus,
                                  const std::vector<uint32_t>& ids, const Regularization& regularization, float scale,
                                  Parameters<float>& grads) {
  if (started_ > 0 && &grads != update_grads_)
    throw std::logic_error("ShardedModel::add_gradient: another gradient than the update's first batch's");
  update_grads_ = &grads;
  return run_batch(params, corpus, ids, regularization, scale, &grads);
}

void ShardedModel::when_output_layer_done(std::function<void(FlatRange)> start) { output_done_ = std::move(start); }

void ShardedModel::sum_gradients(Parameters<float>& grads) {
  if (started_ > 0 && &grads != update_grads_)
    throw std::logic_error("ShardedModel::sum_gradients: another gradient than the update's");
  profile::ScopedPhase phase(profile::Phase::gradient_sum);
  // Around the span handed out already (when_output_layer_done), which its reader may be using.
  const size_t size = grads.values().size();
  const FlatRange rest[2] = {{0, summed_.first}, {summed_.last, size}};
  for (const FlatRange& range : rest) {
    if (started_ == 0)  // a rank left without pairs adds nothing
      std::fill(grads.values().begin() + range.first, grads.values().begin() + range.last, 0.f);
    sum_into(grads, started_, range.first, range.last);
  }
  started_ = 0;
  summed_ = {0, 0};
}

double ShardedModel::run_batch(const Parameters<float>& params, const ParallelCorpus& corpus,
                               const std::vector<uint32_t>& ids, const Regularization& regularization, float scale,
                               Parameters<float>* grads) {
  // Global shard g (of all ranks' threads) takes pairs g, g + shards, g + 2·shards, … of the
  // batch; this rank runs shards rank·threads … rank·threads + threads − 1 of them.
  const int threads = static_cast<int>(shards_.size());
  const int global_shards = static_cast<int>(std::min<size_t>(static_cast<size_t>(threads) * mpi::size(), ids.size()));
  const int first = mpi::rank() * threads;
  const int count = std::clamp(global_shards - first, 0, threads);
  std::optional<profile::ScopedPhase> phase(std::in_place, profile::Phase::batching);
  for (int t = 0; t < count; ++t) {
    shard_ids_.clear();
    for (size_t k = static_cast<size_t>(first + t); k < ids.size(); k += global_shards) shard_ids_.push_back(ids[k]);
    pad_batch(corpus, shard_ids_, shards_[t]->batch);
  }
  if (projection_bf16_) {  // the weights of this run
    convert_projection(params, *projection_bf16_);
    weights_bf16_->assign(params);
  }
  phase.reset();
  // when_output_layer_done: the last shard through the output layer adds the shards' part
  // of it (those of this batch, and those that only ran earlier batches of the update)
  std::function<void(FlatRange)> start = std::move(output_done_);
  output_done_ = nullptr;
  std::atomic<int> through_output{0};
  std::function<void()> output_done;
  if (start) {
    if (!grads) throw std::logic_error("ShardedModel: when_output_layer_done before a forward-only run");
    summed_ = output_span_;
    output_done = [&, holding = std::max(started_, count)] {
      if (through_output.fetch_add(1) + 1 < count) return;
      profile::ScopedPhase summing(profile::Phase::gradient_sum);  // on this shard's thread
      if (holding == 0)  // no pairs for this rank in the whole update: it adds nothing
        std::fill(grads->values().begin() + summed_.first, grads->values().begin() + summed_.last, 0.f);
      sum_into(*grads, holding, summed_.first, summed_.last);
      start(summed_);
    };
    if (count == 0) output_done();
  }
  double cost = 0, nll = 0, guided = 0;
  std::exception_ptr error;
#pragma omp parallel for num_threads(std::max(count, 1)) schedule(static, 1) reduction(+ : cost, nll, guided)
  for (int t = 0; t < count; ++t) {
    try {
      cost += run_shard(params, regularization, t, first + t, scale, grads, t >= started_, output_done);
      for (float token_nll : shards_[t]->workspace.token_nll) nll += token_nll;
      guided += shards_[t]->workspace.guided_cost;
    } catch (...) {  // (std::bad_alloc above all) an exception must not leave the parallel region
#pragma omp critical(rnnsearch_sharded_model_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) {
    started_ = 0;  // the shards' buffers are half written: the update is lost
    summed_ = {0, 0};
    std::rethrow_exception(error);
  }
  if (grads) started_ = std::max(started_, count);
  last_nll_ = nll;
  last_guided_cost_ = guided;
  return cost;
}

double ShardedModel::run_shard(const Parameters<float>& params, const Regularization& regularization, int t,
                               int global_shard, float scale, Parameters<float>* grads, bool zero,
                               const std::function<void()>& output_done) {
  Shard& shard = *shards_[t];
  std::optional<Bf16Products> bf16_products;
  if (weights_bf16_) bf16_products.emplace(*weights_bf16_);
  Regularization shard_regularization = regularization;
  shard_regularization.seed = mix_seed(regularization.seed + static_cast<uint64_t>(global_shard));
  if (!grads) return rnnsearch_forward<float>(params, shard.batch, shard_regularization, shard.workspace);
  Parameters<float>& g = t == 0 ? *grads : *shard.grads;
  if (zero) g.set_zero();  // its first batch of the update
  return rnnsearch_forward_backward<float>(params, shard.batch, shard_regularization, scale, shard.workspace, g,
                                           output_done);
}

void ShardedModel::sum_into(Parameters<float>& total, int count, size_t first, size_t last) {
  const long begin = static_cast<long>(first), end = static_cast<long>(last);
  float* out = total.values().data();
  for (int t = 1; t < count; ++t) {
    const float* in = shards_[t]->grads->values().data();
    // (inside the shards' parallel region, from output_done, on that thread alone)
#pragma omp parallel for simd schedule(static) if (!omp_in_parallel())
    for (long k = begin; k < end; ++k) out[k] += in[k];
  }
}

}  // namespace rnnsearch
