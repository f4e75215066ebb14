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
//
// The ring overlaps the backward pass: the output layer's gradient (42% of preset small's)
// is final before the decoder's and encoder's backward passes start (ShardedModel::
// when_output_layer_done), and start_sum exchanges it then, on a thread of its own, while
// they run; sum_gradients waits for it and exchanges the rest. Each element is added in the
// same order as by one ring over the whole vector (its part, hence its ring steps, is the
// same), so the result is the same to the bit. It is on when the ranks span several hosts;
// RNNSEARCH_MPI_OVERLAP=1 turns it on for a ring on one host, =0 off anywhere.
#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rnnsearch/kernels/tensor.h"
#include "rnnsearch/model/parameters.h"
#include "rnnsearch/util/mpi.h"
#include "rnnsearch/util/profile.h"

namespace rnnsearch {

class WeightPartition {
 public:
  explicit WeightPartition(size_t parameter_count);  // cut for mpi::size() ranks
  ~WeightPartition();                                 // waits for start_sum's thread
  WeightPartition(const WeightPartition&) = delete;
  WeightPartition& operator=(const WeightPartition&) = delete;

  size_t begin() const { return bounds_[rank_]; }  // this rank's part: [begin, end)
  size_t end() const { return bounds_[rank_ + 1]; }

  // On one host, moves the weights (the same on every rank) and the gradient into the
  // memory the ranks share; otherwise does nothing. Once, before the first update.
  void place(Parameters<float>& params, Parameters<float>& grads);
  // The ring, started early by start_sum: more than one rank, not in shared memory, an MPI
  // that lets a second thread call it, and several hosts or RNNSEARCH_MPI_OVERLAP=1 (not 0),
  // on every rank. Decided by place.
  bool overlaps() const { return overlaps_; }
  // "shared memory", "ring" or "ring, overlapped": for the log.
  std::string exchange_name() const;

  // Starts summing the ranks' gradients of grads[span] on a thread of its own; the caller
  // leaves that span alone and calls no MPI until sum_gradients. Only when overlaps().
  void start_sum(FlatSpan<float> grads, FlatRange span);
  // The ranks' gradients summed into this rank's part (the other parts keep partial sums);
  // after start_sum, waits for its span and sums the rest.
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
  bool overlaps_ = false;
  // start_sum's: its thread, its span and the bounds of the ring's parts clipped to it
  std::thread early_;
  FlatRange early_span_{0, 0};
  std::vector<size_t> clipped_;
  void clip_parts(FlatRange range);  // clipped_ = the parts' bounds clamped to range
};

}  // namespace rnnsearch
