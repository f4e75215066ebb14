#include "rnnsearch/model/layer_norm.h"

#include <cmath>

namespace rnnsearch {

template <class T>
void layer_norm_forward(const MatCRef<T>& P, NormedProduct<T> norm, Index begin, Index width, int block) {
  auto hat = norm.hat.middleCols(begin, width);
  auto inv_std = norm.inv_std;
  for (Index r = 0; r < P.rows(); ++r) {
    const T mean = P.row(r).mean();
    hat.row(r) = P.row(r).array() - mean;
    const T var = hat.row(r).squaredNorm() / static_cast<T>(width);
    const T s = T(1) / std::sqrt(var + static_cast<T>(kLayerNormEpsilon));
    hat.row(r) *= s;
    inv_std(r, block) = s;
  }
}

template <class T>
void layer_norm_forward(const MatCRef<T>& P, NormedProduct<T> norm) {
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
  for (Index r = 0; r < dy.rows(); ++r) {
    dgain += dy.row(r).cwiseProduct(hat.row(r));
    // γ∘dy, then dP = s (γ∘dy − mean(γ∘dy) − x̂ mean(γ∘dy ∘ x̂)) over x̂'s storage
    const RowVec<T> gdy = dy.row(r).cwiseProduct(gain);
    const T mean_gdy = gdy.mean(), mean_gdy_hat = gdy.cwiseProduct(hat.row(r)).mean();
    hat.row(r) = norm.inv_std(r, block) * (gdy.array() - mean_gdy - hat.row(r).array() * mean_gdy_hat).matrix();
  }
}

template <class T>
void layer_norm_backward(const MatCRef<T>& dy, NormedProduct<T> norm) {
  const Index n = dy.cols() / 3;
  layer_norm_backward<T>(dy.leftCols(2 * n), norm, 0, 2 * n, 0);
  layer_norm_backward<T>(dy.rightCols(n), norm, 2 * n, n, 1);
}

#define RNNSEARCH_INSTANTIATE_LAYER_NORM(T)                                                                      \
  template void layer_norm_forward<T>(const MatCRef<T>&, NormedProduct<T>, Index, Index, int);            \
  template void layer_norm_forward<T>(const MatCRef<T>&, NormedProduct<T>);                               \
  template void layer_norm_backward<T>(const MatCRef<T>&, NormedProduct<T>, Index, Index, int);           \
  template void layer_norm_backward<T>(const MatCRef<T>&, NormedProduct<T>);
RNNSEARCH_INSTANTIATE_LAYER_NORM(float)
RNNSEARCH_INSTANTIATE_LAYER_NORM(double)

}  // namespace rnnsearch
