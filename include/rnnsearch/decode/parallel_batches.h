#pragma once
// The batching loop that translation and scoring share: items sorted longest first, cut
// into batches of similar length (little padding, beams that end together), batches run in
// parallel with one workspace per thread. Longest first also starts the slowest batches
// first, so the threads finish together.
#include <cstddef>
#include <functional>
#include <vector>

#include "rnnsearch/util/mpi.h"

namespace rnnsearch {

// The batch size to cut `items` into: batch_size, or fewer when that would leave a thread (of
// any MPI rank) without a batch. 32 items on 2 threads are 2 batches of 16, not one batch on
// one thread while the other waits (a server's batches are often that small).
size_t balanced_batch_size(size_t items, size_t batch_size, int threads);

// Runs run_batch(members, thread) for each consecutive slice of `order` of at most
// batch_size items, on up to `threads` threads (thread = 0 .. threads-1 picks the caller's
// workspace). In an MPI job (util/mpi.h) each rank runs its share of the batches (dealt
// out in rounds, every other round backwards, so that long and short batches spread
// evenly); share_batch_results then gives every rank the others' results. A single batch
// runs outside a parallel region, so Eigen may use the threads itself. The first exception thrown by any batch is rethrown after all have stopped: an
// exception must not leave an OpenMP region.
void run_batches(const std::vector<size_t>& order, size_t batch_size, int threads,
                 const std::function<void(const std::vector<size_t>& members, int thread)>& run_batch);

// After run_batches with the same order and batch_size, in an MPI job: each rank writes the
// results of its batches' items (write(message, item)) and reads the other ranks'
// (read(message, item)), so that every rank holds every result. Nothing to do for one process.
void share_batch_results(const std::vector<size_t>& order, size_t batch_size,
                         const std::function<void(mpi::Writer& message, size_t item)>& write,
                         const std::function<void(mpi::Reader& message, size_t item)>& read);

}  // namespace rnnsearch
