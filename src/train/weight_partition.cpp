#include "rnnsearch/train/weight_partition.h"

#include <algorithm>

#include "rnnsearch/train/optimizer.h"
#include "rnnsearch/util/mpi.h"

namespace rnnsearch {

// Rank r owns norm blocks [kNormBlocks · r / N, kNormBlocks · (r + 1) / N); beyond
// kNormBlocks ranks some own nothing (they still compute gradients).
namespace {
int first_block_of(int rank) { return kNormBlocks * rank / mpi::size(); }
}  // namespace

WeightPartition::WeightPartition(size_t parameter_count)
    : rank_(mpi::rank()), first_block_(first_block_of(rank_)), last_block_(first_block_of(rank_ + 1)) {
  const int ranks = mpi::size();
  for (int r = 0; r <= ranks; ++r) bounds_.push_back(norm_block_begin(parameter_count, first_block_of(r)));
  size_t largest = 0;
  for (int r = 0; r < ranks; ++r) largest = std::max(largest, bounds_[r + 1] - bounds_[r]);
  if (ranks > 1) received_.resize(largest);
}

void WeightPartition::sum_gradients(AlignedVector<float>& grads) {
  mpi::reduce_scatter_sum(grads.data(), bounds_, received_.data());
}

double WeightPartition::gradient_norm(const AlignedVector<float>& grads) const {
  double block_sums[kNormBlocks] = {};  // other ranks' blocks stay 0 here: the sum over ranks is exact
  norm_block_sums(grads, first_block_, last_block_, block_sums);
  mpi::sum(block_sums, kNormBlocks);
  return norm_from_block_sums(block_sums);
}

void WeightPartition::share(AlignedVector<float>& values) const { mpi::all_gather(values.data(), bounds_); }

}  // namespace rnnsearch
