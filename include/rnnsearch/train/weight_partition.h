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
#include <cstddef>
#include <vector>

#include "rnnsearch/kernels/tensor.h"

namespace rnnsearch {

class WeightPartition {
 public:
  explicit WeightPartition(size_t parameter_count);  // cut for mpi::size() ranks

  size_t begin() const { return bounds_[rank_]; }  // this rank's part: [begin, end)
  size_t end() const { return bounds_[rank_ + 1]; }

  // The ranks' gradients summed into this rank's part (the other parts keep partial sums).
  void sum_gradients(AlignedVector<float>& grads);
  // ‖g‖₂ of the summed gradient, from every rank's part; the same value on every rank.
  double gradient_norm(const AlignedVector<float>& grads) const;
  // Every rank's part of values (weights, optimizer state) to every rank.
  void share(AlignedVector<float>& values) const;

 private:
  int rank_, first_block_, last_block_;
  std::vector<size_t> bounds_;     // part r = [bounds_[r], bounds_[r + 1])
  AlignedVector<float> received_;  // the reduce-scatter's incoming part
};

}  // namespace rnnsearch
