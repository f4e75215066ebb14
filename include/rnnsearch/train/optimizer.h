#pragma once
// Optimizers over the flat parameter vector (all tensors at once, one vectorised pass).
//
//   adam (torch.optim.Adam):  m = β1 m + (1-β1) g,   v = β2 v + (1-β2) g²,
//                             θ -= lr · (m / (1-β1^t)) / (sqrt(v / (1-β2^t)) + ε)
//   sgd:                      θ -= lr · g
//
// With exponential smoothing α (Marian's --exponential-smoothing), the optimizer also keeps
// a moving average of the weights after every step t = 1, 2, ...:
//
//   θ̄ += α_t (θ − θ̄),   α_t = max(α, 9 / (9 + t))
//
// θ̄ starts as the weights the first step started from; the warm-up term (as TensorFlow's
// ExponentialMovingAverage with num_updates) lets it forget those random weights within the
// first few hundred steps instead of the 1/α it would take otherwise. The average validates and translates: it is the
// weights' trajectory with the noise of the last updates smoothed out.
#include <cstdint>
#include <string>
#include <vector>

#include "rnnsearch/kernels/tensor.h"

namespace rnnsearch {

enum class OptimizerKind { adam, sgd };
OptimizerKind parse_optimizer_kind(const std::string& name);  // throws rnnsearch::Error

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::adam;
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  double smoothing = 0;  // α of the weight average; 0 = no average
};

class Optimizer {
 public:
  // Steps parameters [begin, end) of the flat vector: all of them in one process, this
  // rank's part in an MPI job (WeightPartition); the state of the other parts (moments,
  // average) goes stale until gathered from their ranks (state()).
  Optimizer(const OptimizerOptions& options, size_t parameter_count, size_t begin = 0, size_t end = SIZE_MAX);

  // One step on the gradient grad_scale · grads (the clipping factor, folded into the step:
  // one pass over the gradient fewer than scaling it first).
  void step(FlatSpan<float> params, FlatSpan<const float> grads, float grad_scale = 1);
  long steps() const { return steps_; }
  void set_lr(double lr) { options_.lr = lr; }  // the schedule's rate of the next step (lr_schedule.h)
  // θ̄, or nullptr without smoothing or before the first step.
  const AlignedVector<float>* average() const { return average_.empty() ? nullptr : &average_; }
  AlignedVector<float>* average() { return average_.empty() ? nullptr : &average_; }
  // The parameter-sized arrays of the state (Adam's moments, the average once started).
  std::vector<AlignedVector<float>*> state();

  // optimizer.npz: "adam_m", "adam_v" (Adam only), "average" (with smoothing, after the
  // first step) and "step" (a 1-element int64 array: float32 would be exact only to 2^24).
  void save(const std::string& path) const;
  void load(const std::string& path);  // throws rnnsearch::Error on a size mismatch

 private:
  void adam_step(FlatSpan<float> params, FlatSpan<const float> grads, float grad_scale);

  OptimizerOptions options_;
  size_t parameter_count_;
  long begin_, end_;  // the part stepped
  long steps_ = 0;
  AlignedVector<float> m_, v_;
  AlignedVector<float> average_;
};

// ‖g‖₂ is summed in kNormBlocks fixed blocks, block b = [norm_block_begin(size, b),
// norm_block_begin(size, b + 1)), and the blocks' sums are added in block order: the same
// norm whatever the number of threads, and, as MPI ranks own whole blocks (WeightPartition),
// whatever the number of ranks: every rank clips as one process does.
constexpr int kNormBlocks = 64;
inline size_t norm_block_begin(size_t size, int block) { return size * static_cast<size_t>(block) / kNormBlocks; }
// Σ g² of blocks first … last − 1 into block_sums[first … last − 1].
void norm_block_sums(FlatSpan<const float> grads, int first, int last, double* block_sums);
double norm_from_block_sums(const double* block_sums);  // sqrt(Σ_b block_sums[b]), in block order
// The factor of torch.nn.utils.clip_grad_norm_: max_norm / (‖g‖ + 1e-6) if ‖g‖ > max_norm,
// else 1 (and always 1 for max_norm 0, no clipping).
float clip_factor(double norm, double max_norm);

}  // namespace rnnsearch
