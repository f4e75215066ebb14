#include "rnnsearch/model/dropout.h"

#include <random>

namespace rnnsearch {
namespace {

// Inverted dropout's factors m = 0 (probability rate) or 1/(1-rate), drawn one after the
// other from seed: what every mask, of units or of words, is made of.
template <class T>
class DropoutFactors {
 public:
  DropoutFactors(double rate, uint64_t seed)
      : rng_(seed), kept_(1.0 - rate), scale_(static_cast<T>(1.0 / (1.0 - rate))) {}
  T next() { return kept_(rng_) ? scale_ : T(0); }

 private:
  std::mt19937_64 rng_;
  std::bernoulli_distribution kept_;
  T scale_;
};

}  // namespace

template <class T>
void draw_dropout_mask(MatRef<T> mask, double rate, uint64_t seed) {
  if (rate == 0) {
    mask.setOnes();
    return;
  }
  DropoutFactors<T> factors(rate, seed);
  for (Index i = 0; i < mask.rows(); ++i)
    for (Index k = 0; k < mask.cols(); ++k) mask(i, k) = factors.next();
}

template <class T>
void drop_words(MatRef<T> mask, double rate, uint64_t seed, std::vector<T>& keep) {
  DropoutFactors<T> factors(rate, seed);
  keep.resize(static_cast<size_t>(mask.rows()));
  for (Index r = 0; r < mask.rows(); ++r) {
    keep[r] = factors.next();
    mask.row(r) *= keep[r];
  }
}

template void draw_dropout_mask<float>(MatRef<float>, double, uint64_t);
template void draw_dropout_mask<double>(MatRef<double>, double, uint64_t);
template void drop_words<float>(MatRef<float>, double, uint64_t, std::vector<float>&);
template void drop_words<double>(MatRef<double>, double, uint64_t, std::vector<double>&);

}  // namespace rnnsearch
