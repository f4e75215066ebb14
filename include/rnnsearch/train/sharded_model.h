#pragma once
// Data parallelism inside one process: a batch is dealt out round-robin into one shard per
// thread (the shards of a length-sorted batch get similar lengths); every thread runs
// forward and backward on its shard with its own workspace and gradient buffer, so each
// GEMM stays single-threaded and large enough to be efficient; the gradients are summed.
// In an MPI job (util/mpi.h) the shards are those of all ranks' threads: each rank runs its
// own, and the caller adds the ranks' sums (mpi::sum) to get those of the whole batch.
#include <memory>
#include <vector>

#include "rnnsearch/model/bf16_products.h"
#include "rnnsearch/model/rnnsearch.h"
#include "rnnsearch/text/corpus.h"

namespace rnnsearch {

class ShardedModel {
 public:
  // With Precision::bf16, the shards' matrix products run in bf16 (model/bf16_products.h;
  // the vocabulary projection's through kernels/bf16.h).
  ShardedModel(const ModelConfig& config, int threads, Precision precision = Precision::fp32);

  // Σ −log p over the target tokens of this rank's shards of the pairs ids of corpus (all of
  // them in one process); with grads, also sets grads to this rank's part of the gradient
  // of the batch's per-token cost (Σ / the whole batch's target tokens). Global shard g
  // draws its dropout masks from a seed mixed from regularization.seed and g.
  double run(const Parameters<float>& params, const ParallelCorpus& corpus, const std::vector<uint32_t>& ids,
             const Regularization& regularization, Parameters<float>* grads);
  long last_tokens() const { return last_tokens_; }  // target tokens of the last run's whole batch
  // Σ −log p of this rank's part of the last run, unsmoothed (run returns what training
  // minimises, which label smoothing changes).
  double last_nll() const { return last_nll_; }

 private:
  struct Shard {
    Batch batch;
    ModelWorkspace<float> workspace;
    std::unique_ptr<Parameters<float>> grads;  // null for shard 0, which writes into the caller's
  };
  // Σ −log p of shard t, global_shard of the job's (and, with grads, its gradient; shard 0
  // writes into grads).
  double run_shard(const Parameters<float>& params, const Regularization& regularization, int t, int global_shard,
                   long tokens, Parameters<float>* grads);
  // Adds the gradients of shards 1 .. count-1 to shard 0's (total).
  void sum_into(Parameters<float>& total, int count);

  std::vector<std::unique_ptr<Shard>> shards_;
  std::vector<uint32_t> shard_ids_;  // the pairs of the shard being batched (reused)
  std::unique_ptr<Bf16Projection> projection_bf16_;  // --precision bf16: converted at each run
  std::unique_ptr<Bf16Weights> weights_bf16_;        // likewise
  long last_tokens_ = 0;
  double last_nll_ = 0;
};

}  // namespace rnnsearch
