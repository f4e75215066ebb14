#pragma once
// Data parallelism inside one process: a batch is dealt out round-robin into one shard per
// thread (the shards of a length-sorted batch get similar lengths); every thread runs
// forward and backward on its shard with its own workspace and gradient buffer, so each
// GEMM stays single-threaded and large enough to be efficient; the gradients are summed.
// In an MPI job (util/mpi.h) the shards are those of all ranks' threads: each rank runs its
// own, and the caller adds the ranks' sums (WeightPartition::sum_gradients) to get those of
// the whole batch.
#include <functional>
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
  // them in one process), forward only (validation). Global shard g draws its dropout masks
  // from a seed mixed from regularization.seed and g.
  double run(const Parameters<float>& params, const ParallelCorpus& corpus, const std::vector<uint32_t>& ids,
             const Regularization& regularization);
  // The gradient of an update's per-token cost, Σ_b ∇cost_b / Σ_b tokens_b over its batches
  // (one, or N with --accumulate): add_gradient for each batch, with the same grads and
  // scale = 1 / the update's target tokens, then sum_gradients once. Each shard adds its
  // batches into its own buffer (shard 0's is grads) and the shards are added once, in
  // shard order: the order in which MPI ranks add theirs, so that N ranks × 1 thread end
  // with exactly the gradient of 1 process × N threads, with one batch or several.
  // Returns what run returns.
  double add_gradient(const Parameters<float>& params, const ParallelCorpus& corpus, const std::vector<uint32_t>& ids,
                      const Regularization& regularization, float scale, Parameters<float>& grads);
  // grads = this rank's part of the gradient of the batches added since the last call.
  void sum_gradients(Parameters<float>& grads);
  // For the update's last batch: the next add_gradient calls start(span) as soon as the
  // output layer's tensors (span = output_layer_span) hold this rank's whole gradient of the
  // update in grads, every shard's added in shard order as sum_gradients adds them; it calls
  // it on one of the shards' threads (the caller's when this rank has no pairs in the batch)
  // while the others go on with the backward pass, and sum_gradients then adds the rest and
  // leaves the span alone. WeightPartition starts exchanging the span there.
  void when_output_layer_done(std::function<void(FlatRange)> start);
  // Target tokens of the pairs ids: of a whole batch, not only this rank's shards.
  static long target_tokens(const ParallelCorpus& corpus, const std::vector<uint32_t>& ids);
  // Σ −log p of this rank's part of the last run, unsmoothed (run returns what training
  // minimises, which label smoothing changes).
  double last_nll() const { return last_nll_; }
  // Its guided-alignment cost (rnnsearch.h; 0 without links), included in what run returns.
  double last_guided_cost() const { return last_guided_cost_; }

 private:
  struct Shard {
    Batch batch;
    ModelWorkspace<float> workspace;
    std::unique_ptr<Parameters<float>> grads;  // null for shard 0, which writes into the caller's
  };
  // Σ −log p of shard t, global_shard of the job's (and, with grads, adds scale × its
  // gradient into its buffer, first zeroed if zero; shard 0's buffer is grads).
  double run_shard(const Parameters<float>& params, const Regularization& regularization, int t, int global_shard,
                   float scale, Parameters<float>* grads, bool zero, const std::function<void()>& output_done);
  // One batch over the shards: the forward pass (grads null: run), or forward and backward
  // with scale × the gradient added into the shards' buffers (add_gradient).
  double run_batch(const Parameters<float>& params, const ParallelCorpus& corpus, const std::vector<uint32_t>& ids,
                   const Regularization& regularization, float scale, Parameters<float>* grads);
  // Adds the gradients of shards 1 .. count-1 to shard 0's (total), in [first, last) of the
  // flat buffer.
  void sum_into(Parameters<float>& total, int count, size_t first, size_t last);

  std::vector<std::unique_ptr<Shard>> shards_;
  std::vector<uint32_t> shard_ids_;  // the pairs of the shard being batched (reused)
  std::unique_ptr<Bf16Projection> projection_bf16_;  // --precision bf16: converted at each run
  std::unique_ptr<Bf16Weights> weights_bf16_;        // likewise
  double last_nll_ = 0, last_guided_cost_ = 0;
  int started_ = 0;  // shards 0 .. started_-1 hold the update's gradient so far (add_gradient)
  const Parameters<float>* update_grads_ = nullptr;  // the update's (shard 0's buffer)
  const FlatRange output_span_;                      // the output layer's tensors
  std::function<void(FlatRange)> output_done_;       // when_output_layer_done's, for the next batch
  FlatRange summed_{0, 0};                           // summed and handed out already this update
};

}  // namespace rnnsearch
