#include "rnnsearch/decode/parallel_batches.h"

#include <omp.h>

#include <algorithm>
#include <exception>

namespace rnnsearch {

namespace {

// This rank's batches, dealt out in rounds of one per rank, every other round backwards
// (0 1 1 0 0 1 … for 2 ranks): as batches go longest first, each rank gets a fair share of
// long and short ones.
std::vector<long> own_batches(size_t items, size_t batch_size) {
  std::vector<long> batches;
  const long count = static_cast<long>((items + batch_size - 1) / batch_size), ranks = mpi::size();
  for (long k = 0; k < count; ++k) {
    const long round = k / ranks, place = k % ranks;
    if ((round % 2 == 0 ? place : ranks - 1 - place) == mpi::rank()) batches.push_back(k);
  }
  return batches;
}

std::vector<size_t> members_of(const std::vector<size_t>& order, size_t batch_size, long batch) {
  const size_t begin = static_cast<size_t>(batch) * batch_size, end = std::min(order.size(), begin + batch_size);
  return {order.begin() + static_cast<long>(begin), order.begin() + static_cast<long>(end)};
}

}  // namespace

size_t balanced_batch_size(size_t items, size_t batch_size, int threads) {
  const size_t workers = static_cast<size_t>(std::max(1, threads)) * static_cast<size_t>(mpi::size());
  return std::clamp<size_t>((items + workers - 1) / workers, 1, std::max<size_t>(1, batch_size));
}

void run_batches(const std::vector<size_t>& order, size_t batch_size, int threads,
                 const std::function<void(const std::vector<size_t>&, int)>& run_batch) {
  const std::vector<long> batches = own_batches(order.size(), batch_size);
  const long count = static_cast<long>(batches.size());
  std::exception_ptr error;
  // A lone batch (a single sentence: balanced_batch_size gives every thread a batch otherwise)
  // also keeps the GEMM libraries' own threading off: its products are too small to split, and
  // forking per product made a lone sentence slower on 2 threads than on 1 (docs/benchmarks.md,
  // Python module overhead; CHANGELOG.md, 7bb17e8). Its loop runs outside a parallel region, so the setting is the
  // caller's, put back after.
  const int outer_threads = omp_get_max_threads();
  if (count <= 1) omp_set_num_threads(1);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (count > 1)
  for (long k = 0; k < count; ++k) {
    try {
      const std::vector<size_t> members = members_of(order, batch_size, batches[k]);
      run_batch(members, omp_get_thread_num());
    } catch (...) {
#pragma omp critical(rnnsearch_run_batches_error)
      if (!error) error = std::current_exception();
    }
  }
  if (count <= 1) omp_set_num_threads(outer_threads);
  if (error) std::rethrow_exception(error);
}

void share_batch_results(const std::vector<size_t>& order, size_t batch_size,
                         const std::function<void(mpi::Writer&, size_t)>& write,
                         const std::function<void(mpi::Reader&, size_t)>& read) {
  if (mpi::size() == 1) return;
  mpi::Writer message;
  for (long batch : own_batches(order.size(), batch_size))
    for (size_t item : members_of(order, batch_size, batch)) {
      message.put(item);
      write(message, item);
    }
  const std::vector<std::string> messages = mpi::all_gather(message.bytes());
  for (int rank = 0; rank < mpi::size(); ++rank) {
    if (rank == mpi::rank()) continue;
    mpi::Reader reader(messages[static_cast<size_t>(rank)]);
    while (!reader.done()) {
      size_t item = 0;
      reader.get(item);
      read(reader, item);
    }
  }
}

}  // namespace rnnsearch
