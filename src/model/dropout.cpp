#include "rnnsearch/model/dropout.h"

#include <random>

namespace rnnsearch {

template <class T>
void draw_dropout_mask(MatRef<T> mask, double rate, uint64_t seed) {
  if (rate == 0) {
    mask.setOnes();
    return;
  }
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution keep(1.0 - rate);
  const T kept = static_cast<T>(1.0 / (1.0 - rate));
  for (Index i = 0; i < mask.rows(); ++i)
    for (Index k = 0; k < mask.cols(); ++k) mask(i, k) = keep(rng) ? kept : T(0);
}

template <class T>
void drop_words(MatRef<T> mask, double rate, uint64_t seed, std::vector<T>& keep) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution kept(1.0 - rate);
  const T scale = static_cast<T>(1.0 / (1.0 - rate));
  keep.resize(static_cast<size_t>(mask.rows()));
  for (Index r = 0; r < mask.rows(); ++r) {
    keep[r] = kept(rng) ? scale : T(0);
    mask.row(r) *= keep[r];
  }
}

template void draw_dropout_mask<float>(MatRef<float>, double, uint64_t);
template void draw_dropout_mask<double>(MatRef<double>, double, uint64_t);
template void drop_words<float>(MatRef<float>, double, uint64_t, std::vector<float>&);
template void drop_words<double>(MatRef<double>, double, uint64_t, std::vector<double>&);

}  // namespace rnnsearch
