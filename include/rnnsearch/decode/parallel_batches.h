#pragma once
// The batching loop that translation and scoring share: items sorted longest first, cut
// into batches of similar length (little padding, beams that end together), batches run in
// parallel with one workspace per thread. Longest first also starts the slowest batches
// first, so the threads finish together.
#include <cstddef>
#include <functional>
#include <vector>

namespace rnnsearch {

// Runs run_batch(members, thread) for each consecutive slice of `order` of at most
// batch_size items, on up to `threads` threads (thread = 0 .. threads-1 picks the caller's
// workspace). A single batch runs outside a parallel region, so Eigen may use the threads
// itself. The first exception thrown by any batch is rethrown after all have stopped: an
// exception must not leave an OpenMP region.
void run_batches(const std::vector<size_t>& order, size_t batch_size, int threads,
                 const std::function<void(const std::vector<size_t>& members, int thread)>& run_batch);

}  // namespace rnnsearch
