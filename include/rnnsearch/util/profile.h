#pragma once
// Where training time goes, phase by phase (`rnnsearch train --profile`), so that the next
// optimisation is chosen by measurement. Off by default: a disabled ScopedPhase costs one
// branch. Each thread accumulates into its own slot; report() sums them, so with several
// threads the phase times add up to CPU time, not wall time.
#include <string>

namespace rnnsearch::profile {

// Each phase is named by what runs in it; `enum class` keeps the names out of the model's
// namespace, where encoder_forward & co. are functions.
enum class Phase : int {
  batching,              // building and padding the batch
  encoder_forward,
  attention_forward,
  decoder_gru_forward,   // the step GEMMs (q, c dec_C) and the GRU cell
  output_forward,        // output layer and softmax (validation)
  output_layer,          // output layer and softmax, forward and backward (training)
  decoder_gru_backward,
  attention_backward,
  decoder_weight_grads,  // the deferred per-sequence weight-gradient GEMMs
  encoder_backward,
  gradient_sum,          // adding the shards' gradients
  optimizer,             // clipping and the optimizer step
  rank_exchange,         // MPI: the gradients' reduce-scatter and the weights' all-gather,
                         // or their sum in shared memory (the ring's includes its waits)
  rank_wait,             // MPI in shared memory: the barriers, waiting for the slowest rank
  state_gather,          // MPI: the optimizer state's all-gather before a checkpoint or validation
  count
};
constexpr int kNumPhases = static_cast<int>(Phase::count);

void enable(bool on);
bool enabled();
void add(Phase phase, double seconds);
void reset();
// One line per phase: seconds, share of the total, and per-update milliseconds.
std::string report(long updates);

class ScopedPhase {
 public:
  explicit ScopedPhase(Phase phase);
  ~ScopedPhase();
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  Phase phase_;
  long long start_ns_;  // 0 when profiling is off
};

}  // namespace rnnsearch::profile
