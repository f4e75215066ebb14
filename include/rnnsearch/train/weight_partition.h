#pragma once
// The update of an MPI job (docs/design.md §7), shared out as in ZeRO stage 1: the flat
// parameter vector is cut into one part per rank; the ranks' gradients are added with a
// reduce-scatter, so that each rank holds the sum for its own part; each rank clips and
// steps only its part (the optimizer's 1/N); an all-gather hands every rank the new weights.
// The same bytes cross the wire as in the allreduce this replaces (a ring allreduce is a
// reduce-scatter and an all-gather), and the optimizer step, which every rank would
// otherwise repeat on all the weights, is divided among them.
//
// The parts are whole blocks of the gradient norm (optimizer.h: kNormBlocks), so each rank
// adds the squares of its own blocks and every rank gets the norm one process computes.
// In one process the part is everything and every call is a no-op (or a plain norm).
//
// When all the ranks run on one host (mpi::SharedFloats), nothing is sent: the weights are
// one copy in memory the ranks share, and each rank's gradient lies where the others read
// it. A rank adds the ranks' gradients of its part in rank order (the order in which one
// process adds its threads' shards: 2 ranks × 1 thread = 1 process × 2 threads, exactly),
// steps its part of the weights in place, and a barrier replaces the all-gather. Across
// hosts the ring exchange above runs as before (RNNSEARCH_MPI_RING=1 forces it on one host).
#include <cstddef>
#include <memory>
#include <vector>

#include "rnnsearch/kernels/tensor.h"
#include "rnnsearch/model/parameters.h"
#include "rnnsearch/util/mpi.h"
#include "rnnsearch/util/profile.h"

namespace rnnsearch {

class WeightPartition {
 public:
  explicit WeightPartition(size_t parameter_count);  // cut for mpi::size() ranks

  size_t begin() const { return bounds_[rank_]; }  // this rank's part: [begin, end)
  size_t end() const { return bounds_[rank_ + 1]; }

  // On one host, moves the weights (the same on every rank) and the gradient into the
  // memory the ranks share; otherwise does nothing. Once, before the first update.
  void place(Parameters<float>& params, Parameters<float>& grads);
  bool shares_memory() const { return shared_grads_ != nullptr; }

  // The ranks' gradients summed into this rank's part (the other parts keep partial sums).
  void sum_gradients(FlatSpan<float> grads);
  // ‖g‖₂ of the summed gradient, from every rank's part; the same value on every rank.
  double gradient_norm(FlatSpan<const float> grads) const;
  // Every rank's part of values (weights, optimizer state) to every rank; for the weights
  // placed in shared memory, a barrier after which every rank sees every rank's step.
  // `--profile` counts the all-gather under `phase`: the weights' of every update under
  // rank_exchange, the optimizer state's (before a checkpoint or validation) apart.
  void share(FlatSpan<float> values, profile::Phase phase = profile::Phase::rank_exchange) const;

 private:
  int rank_, first_block_, last_block_;
  std::vector<size_t> bounds_;     // part r = [bounds_[r], bounds_[r + 1])
  AlignedVector<float> received_;  // the reduce-scatter's incoming part
  std::unique_ptr<mpi::SharedFloats> shared_weights_;  // after place, on one host: rank 0's segment
  std::unique_ptr<mpi::SharedFloats> shared_grads_;    // likewise: one gradient per rank
};

}  // namespace rnnsearch
