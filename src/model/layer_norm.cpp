#include "rnnsearch/model/layer_norm.h"

#include <cmath>

namespace rnnsearch {

template <class T>
void layer_norm_forward(MatRef<T> P, NormedProduct<T> norm, Index begin, Index width, int block) {
  auto hat = norm.hat.middleCols(begin, width);
  const Eigen::Map<const RowVec<T>> gain(norm.gain + begin, width), bias(norm.bias + begin, width);
  const T count = static_cast<T>(width);
  for (Index r = 0; r < P.rows(); ++r) {
    // one pass for the mean, one for the variance, one that writes x̂ and γ ∘ x̂ + β
    const T mean = P.row(r).sum() / count;
    const T s = T(1) / std::sqrt((P.row(r).array() - mean).square().sum() / count + static_cast<T>(kLayerNormEpsilon));
    norm.inv_std(r, block) = s;
    T* p = P.row(r).data();
    T* x = hat.row(r).data();
    for (Index k = 0; k < width; ++k) {
      x[k] = (p[k] - mean) * s;
      p[k] = x[k] * gain[k] + bias[k];
    }
  }
}

template <class T>
void layer_norm_forward(MatRef<T> P, NormedProduct<T> norm) {
  const Index n = P.cols() / 3;
  layer_norm_forward<T>(P.leftCols(2 * n), norm, 0, 2 * n, 0);
  layer_norm_forward<T>(P.rightCols(n), norm, 2 * n, n, 1);
}

template <class T>
void layer_norm_backward(const MatCRef<T>& dy, NormedProduct<T> norm, Index begin, Index width, int block) {
  auto hat = norm.hat.middleCols(begin, width);
  const Eigen::Map<const RowVec<T>> gain(norm.gain + begin, width);
  RowVecMap<T> dgain(norm.dgain + begin, width), dbias(norm.dbias + begin, width);
  dbias += dy.colwise().sum();
  dgain += dy.cwiseProduct(hat).colwise().sum();
  const T count = static_cast<T>(width);
  for (Index r = 0; r < dy.rows(); ++r) {
    // dP = s (γ∘dy − mean(γ∘dy) − x̂ mean(γ∘dy ∘ x̂)), over x̂'s storage
    const T mean_gdy = dy.row(r).dot(gain) / count;
    const T mean_gdy_hat = dy.row(r).cwiseProduct(gain).dot(hat.row(r)) / count;
    hat.row(r) = norm.inv_std(r, block) *
                 (dy.row(r).cwiseProduct(gain).array() - mean_gdy - hat.row(r).array() * mean_gdy_hat).matrix();
  }
}

template <class T>
void layer_norm_backward(const MatCRef<T>& dy, NormedProduct<T> norm) {
  const Index n = dy.cols() / 3;
  layer_norm_backward<T>(dy.leftCols(2 * n), norm, 0, 2 * n, 0);
  layer_norm_backward<T>(dy.rightCols(n), norm, 2 * n, n, 1);
}

#define RNNSEARCH_INSTANTIATE_LAYER_NORM(T)                                                     \
  template void layer_norm_forward<T>(MatRef<T>, NormedProduct<T>, Index, Index, int);          \
  template void layer_norm_forward<T>(MatRef<T>, NormedProduct<T>);                             \
  template void layer_norm_backward<T>(const MatCRef<T>&, NormedProduct<T>, Index, Index, int); \
  template void layer_norm_backward<T>(const MatCRef<T>&, NormedProduct<T>);
RNNSEARCH_INSTANTIATE_LAYER_NORM(float)
RNNSEARCH_INSTANTIATE_LAYER_NORM(double)

}  // namespace rnnsearch
