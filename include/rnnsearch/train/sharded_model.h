#pragma once
// Data parallelism inside one process: a batch is dealt out round-robin into one shard per
// thread (the shards of a length-sorted batch get similar lengths); every thread runs
// forward and backward on its shard with its own workspace and gradient buffer, so each
// GEMM stays single-threaded and large enough to be efficient; the gradients are summed.
#include <memory>
#include <vector>

#include "rnnsearch/model/rnnsearch.h"
#include "rnnsearch/text/corpus.h"

namespace rnnsearch {

class ShardedModel {
 public:
  ShardedModel(const ModelConfig& config, int threads);

  // Σ −log p over the target tokens of the pairs ids of corpus; with grads, also sets grads
  // to the gradient of the per-token cost (sum / target tokens). Shard t draws its dropout
  // masks from a seed mixed from regularization.seed and t.
  double run(const Parameters<float>& params, const ParallelCorpus& corpus, const std::vector<uint32_t>& ids,
             const Regularization& regularization, Parameters<float>* grads);
  long last_tokens() const { return last_tokens_; }  // target tokens of the last run
  // Σ −log p of the last run, unsmoothed (run returns what training minimises, which label
  // smoothing changes).
  double last_nll() const { return last_nll_; }

 private:
  struct Shard {
    Batch batch;
    ModelWorkspace<float> workspace;
    std::unique_ptr<Parameters<float>> grads;  // null for shard 0, which writes into the caller's
  };
  // Σ −log p of shard t (and, with grads, its gradient; shard 0 writes into grads).
  double run_shard(const Parameters<float>& params, const Regularization& regularization, int t, long tokens,
                   Parameters<float>* grads);
  void sum_into(Parameters<float>& total, int count);

  std::vector<std::unique_ptr<Shard>> shards_;
  long last_tokens_ = 0;
  double last_nll_ = 0;
};

}  // namespace rnnsearch
