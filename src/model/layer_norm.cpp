#include "rnnsearch/model/layer_norm.h"

#include <cmath>

namespace rnnsearch {

template <class T>
void layer_norm_forward(const MatCRef<T>& P, AddedRows<T> add, Activation f, MatRef<T> out, NormedProduct<T> norm,
                        Index begin, Index width, int block) {
  using RowArray = Eigen::Map<const Eigen::Array<T, 1, Eigen::Dynamic>>;
  const RowArray gain(norm.gain + begin, width), bias(norm.bias + begin, width);
  const T count = static_cast<T>(width);
  for (Index r = 0; r < P.rows(); ++r) {
    const auto p = P.row(r).array();
    const T mean = p.sum() / count;
    const T s = T(1) / std::sqrt((p - mean).square().sum() / count + static_cast<T>(kLayerNormEpsilon));
    norm.inv_std(r, block) = s;
    auto x = norm.hat.row(r).segment(begin, width).array();
    x = (p - mean) * s;
    // out = f(γ ∘ x̂ + β + add), read from the x̂ just written (P may be out's storage)
    const auto y = x * gain + bias + RowArray(add.data + r * add.stride, width);
    auto o = out.row(r).array();
    switch (f) {
      case Activation::none: o = y; break;
      case Activation::sigmoid: o = y.logistic(); break;
      case Activation::tanh: o = y.tanh(); break;
    }
  }
}

template <class T>
void layer_norm_forward(const MatCRef<T>& P, AddedRows<T> add, MatRef<T> out, NormedProduct<T> norm) {
  const Index n = P.cols() / 3;
  layer_norm_forward<T>(P.leftCols(2 * n), add, Activation::none, out.leftCols(2 * n), norm, 0, 2 * n, 0);
  layer_norm_forward<T>(P.rightCols(n), {add.data + 2 * n, add.stride}, Activation::none, out.rightCols(n), norm,
                        2 * n, n, 1);
}

template <class T>
void layer_norm_backward(const MatCRef<T>& dy, NormedProduct<T> norm, Index begin, Index width, int block) {
  const Eigen::Map<const RowVec<T>> gain(norm.gain + begin, width);
  RowVecMap<T> dgain(norm.dgain + begin, width), dbias(norm.dbias + begin, width);
  const T count = static_cast<T>(width);
  for (Index r = 0; r < dy.rows(); ++r) {
    auto hat = norm.hat.row(r).segment(begin, width);
    dbias += dy.row(r);
    dgain += dy.row(r).cwiseProduct(hat);
    // dP = s (γ∘dy − mean(γ∘dy) − x̂ mean(γ∘dy ∘ x̂)), over x̂'s storage
    const T mean_gdy = dy.row(r).dot(gain) / count;
    const T mean_gdy_hat = dy.row(r).cwiseProduct(gain).dot(hat) / count;
    hat = norm.inv_std(r, block) *
          (dy.row(r).cwiseProduct(gain).array() - mean_gdy - hat.array() * mean_gdy_hat).matrix();
  }
}

template <class T>
void layer_norm_backward(const MatCRef<T>& dy, NormedProduct<T> norm) {
  const Index n = dy.cols() / 3;
  layer_norm_backward<T>(dy.leftCols(2 * n), norm, 0, 2 * n, 0);
  layer_norm_backward<T>(dy.rightCols(n), norm, 2 * n, n, 1);
}

#define RNNSEARCH_INSTANTIATE_LAYER_NORM(T)                                                                       \
  template void layer_norm_forward<T>(const MatCRef<T>&, AddedRows<T>, Activation, MatRef<T>, NormedProduct<T>, Index, \
                                      Index, int);                                                                \
  template void layer_norm_forward<T>(const MatCRef<T>&, AddedRows<T>, MatRef<T>, NormedProduct<T>);                   \
  template void layer_norm_backward<T>(const MatCRef<T>&, NormedProduct<T>, Index, Index, int);                   \
  template void layer_norm_backward<T>(const MatCRef<T>&, NormedProduct<T>);
RNNSEARCH_INSTANTIATE_LAYER_NORM(float)
RNNSEARCH_INSTANTIATE_LAYER_NORM(double)

}  // namespace rnnsearch
