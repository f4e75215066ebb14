#include "rnnsearch/decode/top_candidates.h"

#include <algorithm>
#include <limits>

namespace rnnsearch {

// One pass over the rows' log-probabilities keeping a min-heap of the best so far, O(rows·V).
// Most candidates fall below the heap's minimum: once the heap is full, a block of kBlock
// columns is first tested as a whole (a loop the compiler vectorises, with the same float sums
// and comparison as the scalar test, so the same candidates pass) and only a block holding one
// that passes is walked column by column.
template <class T>
void top_candidates(const Mat<T>& log_probs, const std::vector<int>* shortlist, int first_row,
                    const std::vector<T>& bases, size_t count, const TokenFilter& proposable,
                    std::vector<BeamCandidate<T>>& heap) {
  constexpr int kBlock = 32;
  const auto worse = [](const BeamCandidate<T>& a, const BeamCandidate<T>& b) { return a.log_prob > b.log_prob; };
  const int columns = static_cast<int>(log_probs.cols());
  const int* words = shortlist ? shortlist->data() : nullptr;
  T threshold = -std::numeric_limits<T>::infinity();  // the heap's minimum once it is full
  heap.clear();
  for (size_t i = 0; i < bases.size(); ++i) {
    const int row = first_row + static_cast<int>(i);
    const T* log_p = log_probs.row(row).data();
    const T base = bases[i];
    for (int begin = 0; begin < columns; begin += kBlock) {
      const int end = std::min(columns, begin + kBlock);
      if (heap.size() == count && end - begin == kBlock) {
        int any = 0;
        for (int k = begin; k < end; ++k) any |= !(base + log_p[k] <= threshold);
        if (!any) continue;
      }
      for (int k = begin; k < end; ++k) {
        const int w = words ? words[k] : k;
        const T candidate = base + log_p[k];
        // strict: on a tie the candidate found first stays
        if (candidate <= threshold || !proposable(row, w)) continue;
        if (heap.size() == count) {  // the new candidate replaces the heap's minimum
          std::pop_heap(heap.begin(), heap.end(), worse);
          heap.pop_back();
        }
        heap.push_back({candidate, row, w});
        std::push_heap(heap.begin(), heap.end(), worse);
        if (heap.size() == count) threshold = heap.front().log_prob;
      }
    }
  }
  std::sort(heap.begin(), heap.end(), ranks_before<T>);
}

template void top_candidates<float>(const Mat<float>&, const std::vector<int>*, int, const std::vector<float>&, size_t,
                                    const TokenFilter&, std::vector<BeamCandidate<float>>&);
template void top_candidates<double>(const Mat<double>&, const std::vector<int>*, int, const std::vector<double>&,
                                     size_t, const TokenFilter&, std::vector<BeamCandidate<double>>&);

}  // namespace rnnsearch
