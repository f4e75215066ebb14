#include "rnnsearch/decode/parallel_batches.h"

#include <omp.h>

#include <algorithm>
#include <exception>

namespace rnnsearch {

void run_batches(const std::vector<size_t>& order, size_t batch_size, int threads,
                 const std::function<void(const std::vector<size_t>&, int)>& run_batch) {
  const long batches = static_cast<long>((order.size() + batch_size - 1) / batch_size);
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (batches > 1)
  for (long k = 0; k < batches; ++k) {
    try {
      const size_t begin = static_cast<size_t>(k) * batch_size, end = std::min(order.size(), begin + batch_size);
      const std::vector<size_t> members(order.begin() + static_cast<long>(begin), order.begin() + static_cast<long>(end));
      run_batch(members, omp_get_thread_num());
    } catch (...) {
#pragma omp critical(rnnsearch_run_batches_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace rnnsearch
