#include "rnnsearch/train/weight_partition.h"

#include <algorithm>
#include <stdexcept>

#include <omp.h>

#include "rnnsearch/train/optimizer.h"
#include "rnnsearch/util/cpu.h"
#include "rnnsearch/util/mpi.h"
#include "rnnsearch/util/profile.h"

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

WeightPartition::~WeightPartition() {
  if (early_.joinable()) early_.join();
}

namespace {
// This rank's wish for the overlapped ring (weight_partition.h)
bool overlap_wanted() {
  const auto asked = mpi::environment_switch("RNNSEARCH_MPI_OVERLAP");  // first: a bad value is refused always
  if (!mpi::serialized_threads()) return false;
  if (asked) return *asked;
  // On one host (the ring forced, or no room in /dev/shm) there is no network to wait for:
  // the exchange's copies and sums would only take the cores from the backward pass.
  return !mpi::one_host();
}
}  // namespace

void WeightPartition::place(Parameters<float>& params, Parameters<float>& grads) {
  const size_t count = params.values().size();
  const bool overlap = mpi::size() > 1 && overlap_wanted();
  shared_weights_ = mpi::SharedFloats::allocate(rank_ == 0 ? count : 0);
  if (!shared_weights_) {
    // The ring. Every rank must cut it alike: overlapped only if all want it (mpirun passes
    // a variable to other hosts' ranks only with -x)
    double refused = overlap ? 0 : 1;
    mpi::max(&refused, 1);
    overlaps_ = refused == 0;
    return;
  }
  shared_grads_ = mpi::SharedFloats::allocate(count);
  if (!shared_grads_) {  // every rank gets the same answer
    shared_weights_.reset();
    return;
  }
  float* weights = shared_weights_->segment(0);
  if (rank_ == 0) std::copy(params.values().begin(), params.values().end(), weights);
  // Every page touched now: a /dev/shm that filled up since allocate's check fails here, at
  // the start, not at some update.
  std::fill(shared_grads_->segment(rank_), shared_grads_->segment(rank_) + count, 0.f);
  shared_weights_->synchronize();
  params.use_storage(weights);
  grads.use_storage(shared_grads_->segment(rank_));
  AlignedVector<float>().swap(received_);  // the ring's buffer
}

// Each part r clipped to range: an element keeps its part, hence its ring steps and its
// order of addition.
void WeightPartition::clip_parts(FlatRange range) {
  clipped_.resize(bounds_.size());
  for (size_t r = 0; r < bounds_.size(); ++r) clipped_[r] = std::clamp(bounds_[r], range.first, range.last);
}

std::string WeightPartition::exchange_name() const {
  return shared_grads_ ? "shared memory" : overlaps() ? "ring, overlapped" : "ring";
}

void WeightPartition::start_sum(FlatSpan<float> grads, FlatRange span) {
  if (!overlaps() || early_.joinable()) throw std::logic_error("WeightPartition::start_sum: no overlap, or one running");
  early_span_ = span;
  clip_parts(span);
  early_ = std::thread([this, data = grads.data()] {
    run_on_every_openmp_place();  // not on the core of the worker that started it (under OMP_PROC_BIND)
    omp_set_num_threads(1);       // its sums on this thread alone: the cores run the backward pass
    mpi::reduce_scatter_sum(data, clipped_, received_.data(), true);
  });
}

void WeightPartition::sum_gradients(FlatSpan<float> grads) {
  if (!shared_grads_) {
    profile::ScopedPhase phase(profile::Phase::rank_exchange);
    if (!early_.joinable()) {
      mpi::reduce_scatter_sum(grads.data(), bounds_, received_.data());
      return;
    }
    early_.join();  // (received_ is free again)
    // the rest: the parts clipped to [0, span.first), then to [span.last, end)
    for (const FlatRange rest : {FlatRange{0, early_span_.first}, FlatRange{early_span_.last, bounds_.back()}}) {
      clip_parts(rest);
      mpi::reduce_scatter_sum(grads.data(), clipped_, received_.data());
    }
    return;
  }
  if (grads.data() != shared_grads_->segment(rank_))
    throw std::logic_error("WeightPartition::sum_gradients: not the gradient placed in shared memory");
  {
    profile::ScopedPhase phase(profile::Phase::rank_wait);
    shared_grads_->synchronize();  // every rank's backward pass is done
  }
  profile::ScopedPhase phase(profile::Phase::rank_exchange);
  // Rank 0's + rank 1's + … in blocks that stay in L1: this rank's own segment is one of
  // the addends, so each block's sum is written back only once it is complete.
  constexpr long kBlock = 2048;
  const int ranks = mpi::size();
  float* out = grads.data();
  const long begin = static_cast<long>(this->begin()), end = static_cast<long>(this->end());
#pragma omp parallel for schedule(static)
  for (long first = begin; first < end; first += kBlock) {
    alignas(64) float sum[kBlock];
    const long n = std::min(kBlock, end - first);
    const float* in = shared_grads_->segment(0) + first;
#pragma omp simd
    for (long k = 0; k < n; ++k) sum[k] = in[k];
    for (int r = 1; r < ranks; ++r) {
      in = shared_grads_->segment(r) + first;
#pragma omp simd
      for (long k = 0; k < n; ++k) sum[k] += in[k];
    }
#pragma omp simd
    for (long k = 0; k < n; ++k) out[first + k] = sum[k];
  }
}

double WeightPartition::gradient_norm(FlatSpan<const float> grads) const {
  double block_sums[kNormBlocks] = {};  // other ranks' blocks stay 0 here: the sum over ranks is exact
  norm_block_sums(grads, first_block_, last_block_, block_sums);
  mpi::sum(block_sums, kNormBlocks);
  return norm_from_block_sums(block_sums);
}

void WeightPartition::share(FlatSpan<float> values, profile::Phase phase) const {
  if (shared_weights_ && values.data() == shared_weights_->segment(0)) {
    profile::ScopedPhase timed(profile::Phase::rank_wait);
    shared_weights_->synchronize();
  } else {
    profile::ScopedPhase timed(phase);
    mpi::all_gather(values.data(), bounds_);
  }
}

}  // namespace rnnsearch
