#include "rnnsearch/train/sharded_model.h"

#include <algorithm>
#include <exception>
#include <optional>

#include "rnnsearch/util/profile.h"
#include "rnnsearch/util/seed.h"

namespace rnnsearch {

ShardedModel::ShardedModel(const ModelConfig& config, int threads) {
  for (int t = 0; t < threads; ++t) {
    shards_.push_back(std::make_unique<Shard>());
    if (t > 0) shards_.back()->grads = std::make_unique<Parameters<float>>(config);
  }
}

double ShardedModel::run(const Parameters<float>& params, const ParallelCorpus& corpus,
                         const std::vector<uint32_t>& ids, const Regularization& regularization, Parameters<float>* grads) {
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
  double cost = 0, nll = 0;
  std::exception_ptr error;
#pragma omp parallel for num_threads(count) schedule(static, 1) reduction(+ : cost, nll)
  for (int t = 0; t < count; ++t) {
    try {
      cost += run_shard(params, regularization, t, tokens, grads);
      for (float token_nll : shards_[t]->workspace.token_nll) nll += token_nll;
    } catch (...) {  // (std::bad_alloc above all) an exception must not leave the parallel region
#pragma omp critical(rnnsearch_sharded_model_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  if (grads) sum_into(*grads, count);
  last_tokens_ = tokens;
  last_nll_ = nll;
  return cost;
}

double ShardedModel::run_shard(const Parameters<float>& params, const Regularization& regularization, int t,
                               long tokens, Parameters<float>* grads) {
  Shard& shard = *shards_[t];
  Regularization shard_regularization = regularization;
  shard_regularization.seed = mix_seed(regularization.seed + static_cast<uint64_t>(t));
  if (!grads) return rnnsearch_forward<float>(params, shard.batch, shard_regularization, shard.workspace);
  Parameters<float>& g = t == 0 ? *grads : *shard.grads;
  g.set_zero();
  return rnnsearch_forward_backward<float>(params, shard.batch, shard_regularization, 1.0f / static_cast<float>(tokens),
                                           shard.workspace, g);
}

void ShardedModel::sum_into(Parameters<float>& total, int count) {
  profile::ScopedPhase phase(profile::Phase::gradient_sum);
  const long size = static_cast<long>(total.values().size());
  float* out = total.values().data();
  for (int t = 1; t < count; ++t) {
    const float* in = shards_[t]->grads->values().data();
#pragma omp parallel for simd schedule(static)
    for (long k = 0; k < size; ++k) out[k] += in[k];
  }
}

}  // namespace rnnsearch
