#include "rnnsearch/model/gru.h"

#include "rnnsearch/model/dropout.h"
#include "rnnsearch/model/products.h"

namespace rnnsearch {

template <class T>
void RecurrentDropoutBuffers<T>::draw(double rate, uint64_t seed, Index B, Index rows, Index n) {
  on = rate > 0;
  if (!on) return;
  draw_dropout_mask<T>(rows_of(mask, B, n), rate, seed);
  rows_of(dropped, rows, n);
}

template <class T>
void gru_step_forward(const MatCRef<T>& h_prev, const MatCRef<T>& U, const T* moving, GruStepCache<T> cache,
                      MatRef<T> scratch, MatRef<T> h) {
  const Index B = h_prev.rows(), n = h_prev.cols();
  // cache.gates holds g until each coefficient is replaced by its gate: the updates below
  // are coefficient-wise, so every g_k is read just before gate_k is written over it.
  auto g = cache.gates;
  auto r = cache.gates.leftCols(n);
  auto z = cache.gates.middleCols(n, n);
  auto h_cand = cache.gates.rightCols(n);
  // what the products read: h̄ = h_prev ∘ m with recurrent dropout, else h_prev
  if (cache.dropout) cache.dropout->dropped = h_prev.cwiseProduct(cache.dropout->mask);
  const MatCRef<T> h_read = cache.dropout ? MatCRef<T>(cache.dropout->dropped) : h_prev;

  // [r | z] = σ(g_rz + h̄ U_rz), or σ(g_rz + LN_U(h̄ U_rz)) (normalization and σ fused, row by row)
  multiply(scratch.leftCols(2 * n), h_read, U.leftCols(2 * n));
  if (cache.norm)
    layer_norm_forward<T>(scratch.leftCols(2 * n), {g.data(), g.outerStride()}, Activation::sigmoid,
                          g.leftCols(2 * n), *cache.norm, 0, 2 * n, 0);
  else
    cache.gates.leftCols(2 * n) = (scratch.leftCols(2 * n) + g.leftCols(2 * n)).array().logistic().matrix();
  // h̃ = tanh(g_h + (r ∘ h̄) U_h), or tanh(g_h + LN_U((r ∘ h̄) U_h))
  cache.r_h = r.cwiseProduct(h_read);
  multiply(scratch.rightCols(n), cache.r_h, U.rightCols(n));
  if (cache.norm)
    layer_norm_forward<T>(scratch.rightCols(n), {g.data() + 2 * n, g.outerStride()}, Activation::tanh, h_cand,
                          *cache.norm, 2 * n, n, 1);
  else
    h_cand = (scratch.rightCols(n) + g.rightCols(n)).array().tanh().matrix();
  // h = h_prev + m z ∘ (h̃ - h_prev)   (= (1-z) h_prev + z h̃ for moving rows; h_prev, not h̄)
  for (Index b = 0; b < B; ++b)
    h.row(b) = h_prev.row(b) + moving[b] * z.row(b).cwiseProduct(h_cand.row(b) - h_prev.row(b));
}

template <class T>
void gru_step_backward(const MatCRef<T>& dh, const MatCRef<T>& h_prev, const MatCRef<T>& U, const T* moving,
                       MatRef<T> gates_dg, MatRef<T> scratch, MatRef<T> dh_prev,
                       const std::optional<NormedProduct<T>>& norm,
                       const std::optional<RecurrentDropout<T>>& dropout) {
  const Index B = h_prev.rows(), n = h_prev.cols();
  // dg is written over the gates, which are read to the end: work from a copy
  scratch = gates_dg;
  const auto gates = scratch;
  auto dg = gates_dg;
  const auto r = gates.leftCols(n).array();
  const auto z = gates.middleCols(n, n).array();
  const auto h_cand = gates.rightCols(n).array();
  for (Index b = 0; b < B; ++b) {
    // dh_step = m dh: a padding row passes its gradient straight to h_prev.
    const auto dh_step = (moving[b] * dh.row(b)).array();
    // ∂h/∂h̃ = z, then through tanh: dh̃_pre = dh_step z (1 - h̃²)
    dg.row(b).rightCols(n) = (dh_step * z.row(b) * (1 - h_cand.row(b).square())).matrix();
    // ∂h/∂z = h̃ - h_prev, then through σ: dz_pre = dh_step (h̃ - h_prev) z (1 - z)
    dg.row(b).middleCols(n, n) =
        (dh_step * (h_cand.row(b) - h_prev.row(b).array()) * z.row(b) * (1 - z.row(b))).matrix();
    // direct path: ∂h/∂h_prev = 1 - m z
    dh_prev.row(b) += (dh.row(b).array() * (1 - moving[b] * z.row(b))).matrix();
  }
  // The products read h̄ (h_prev ∘ m with recurrent dropout, else h_prev itself): their share
  // of the gradient goes to dh_read, which is dh_prev, or with dropout the copy of z (no
  // longer read), multiplied by m into dh_prev at the end.
  const MatCRef<T> h_read = dropout ? MatCRef<T>(dropout->dropped) : h_prev;
  MatRef<T> dh_read = dropout ? MatRef<T>(scratch.middleCols(n, n)) : dh_prev;
  if (dropout) dh_read.setZero();
  // The candidate's recurrent product P_h = (r ∘ h̄) U_h has gradient dh̃_pre, or, through
  // LN_U, the dP_h that replaces its x̂.
  if (norm) layer_norm_backward<T>(dg.rightCols(n), *norm, 2 * n, n, 1);
  const MatCRef<T> dP_h = norm ? MatCRef<T>(norm->hat.rightCols(n)) : MatCRef<T>(dg.rightCols(n));
  // d(r ∘ h̄) = dP_h U_h^T, held in the dr_pre slot until dr_pre replaces it;
  // h̄ receives its r ∘ part, r its h̄ ∘ part.
  auto d_rh = dg.leftCols(n);
  d_rh.noalias() = dP_h * U.rightCols(n).transpose();
  dh_read += d_rh.cwiseProduct(gates.leftCols(n));
  // dr_pre = d_rh ∘ h̄ ∘ r (1 - r)
  d_rh = (d_rh.array() * h_read.array() * r * (1 - r)).matrix();
  // through the recurrent gate GEMM: dh̄ += dP_rz U_rz^T, dP_rz = [dr_pre | dz_pre] (through LN_U)
  if (norm) layer_norm_backward<T>(dg.leftCols(2 * n), *norm, 0, 2 * n, 0);
  const MatCRef<T> dP_rz = norm ? MatCRef<T>(norm->hat.leftCols(2 * n)) : MatCRef<T>(dg.leftCols(2 * n));
  dh_read.noalias() += dP_rz * U.leftCols(2 * n).transpose();
  // h̄ = h_prev ∘ m
  if (dropout) dh_prev += dh_read.cwiseProduct(dropout->mask);
}

template <class T>
void gru_input_forward(const MatCRef<T>& X, const MatCRef<T>& W, const ConstRowVecMap<T>& b,
                       const std::optional<NormedProduct<T>>& norm, MatRef<T> g) {
  multiply(g, X, W);
  if (norm)
    layer_norm_forward<T>(g, {b.data(), 0}, g, *norm);  // LN_W(X W) + b, fused
  else
    g.rowwise() += b;
}

template <class T>
MatCRef<T> gru_input_backward(const MatCRef<T>& X, const MatCRef<T>& dg, const std::optional<NormedProduct<T>>& norm,
                              MatRef<T> dW, RowVecMap<T> db) {
  db += dg.colwise().sum();
  if (norm) layer_norm_backward<T>(dg, *norm);
  const MatCRef<T> dP = norm ? MatCRef<T>(norm->hat) : dg;
  dW.noalias() += X.transpose() * dP;
  return dP;
}

template <class T>
void gru_accumulate_dU(const MatCRef<T>& h_prev_all, const MatCRef<T>& r_h_all,
                       const MatCRef<T>& dP_all, MatRef<T> dU) {
  const Index n = h_prev_all.cols();
  dU.leftCols(2 * n).noalias() += h_prev_all.transpose() * dP_all.leftCols(2 * n);
  dU.rightCols(n).noalias() += r_h_all.transpose() * dP_all.rightCols(n);
}

template <class T>
void transition_weight_grads(const TransitionBuffers<T>& t, Index rows, bool layer_norm, MatRef<T> dU,
                             RowVecMap<T> db) {
  const auto dg = t.gates.topRows(rows);
  db += dg.colwise().sum();
  gru_accumulate_dU<T>(t.dropout.products_input(t.input.topRows(rows), rows), t.r_h.topRows(rows),
                       layer_norm ? t.u_norm.hat.topRows(rows) : dg, dU);
}

#define RNNSEARCH_INSTANTIATE_GRU(T)                                                                          \
  template void gru_step_forward<T>(const MatCRef<T>&, const MatCRef<T>&, const T*, GruStepCache<T>,          \
                                    MatRef<T>, MatRef<T>);                                                    \
  template void gru_step_backward<T>(const MatCRef<T>&, const MatCRef<T>&, const MatCRef<T>&, const T*,       \
                                     MatRef<T>, MatRef<T>, MatRef<T>,                                         \
                                     const std::optional<NormedProduct<T>>&,                                  \
                                     const std::optional<RecurrentDropout<T>>&);                              \
  template void gru_input_forward<T>(const MatCRef<T>&, const MatCRef<T>&, const ConstRowVecMap<T>&,          \
                                     const std::optional<NormedProduct<T>>&, MatRef<T>);                      \
  template MatCRef<T> gru_input_backward<T>(const MatCRef<T>&, const MatCRef<T>&,                             \
                                            const std::optional<NormedProduct<T>>&, MatRef<T>, RowVecMap<T>); \
  template void gru_accumulate_dU<T>(const MatCRef<T>&, const MatCRef<T>&,                                    \
                                     const MatCRef<T>&, MatRef<T>);                                           \
  template void transition_weight_grads<T>(const TransitionBuffers<T>&, Index, bool, MatRef<T>, RowVecMap<T>); \
  template struct RecurrentDropoutBuffers<T>;
RNNSEARCH_INSTANTIATE_GRU(float)
RNNSEARCH_INSTANTIATE_GRU(double)

}  // namespace rnnsearch
