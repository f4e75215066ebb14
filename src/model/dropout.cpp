#include "rnnsearch/model/dropout.h"

#include <random>

namespace rnnsearch {

template <class T>
void draw_dropout_mask(MatRef<T> mask, double rate, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution keep(1.0 - rate);
  const T kept = static_cast<T>(1.0 / (1.0 - rate));
  for (Index i = 0; i < mask.rows(); ++i)
    for (Index k = 0; k < mask.cols(); ++k) mask(i, k) = keep(rng) ? kept : T(0);
}

template void draw_dropout_mask<float>(MatRef<float>, double, uint64_t);
template void draw_dropout_mask<double>(MatRef<double>, double, uint64_t);

}  // namespace rnnsearch
