#include "rnnsearch/model/attention.h"

#include "rnnsearch/model/products.h"

namespace rnnsearch {

namespace {

// u_j = tanh(q + K_j) for the source positions j (rows of keys). Row by row: Eigen does not
// vectorise a rowwise() broadcast (its Replicate has no packet access), which left the
// attention's tanh, its costliest element-wise step, scalar.
template <class T, class Keys>
void attention_hidden(const Keys& keys, const RowVecCRef<T>& q, MatRef<T> u) {
  for (Index j = 0; j < keys.rows(); ++j) u.row(j) = (keys.row(j) + q).array().tanh().matrix();
}

}  // namespace

template <class T>
void attention_forward(const MatCRef<T>& q, const AttentionMemory<T>& memory,
                       const int* row_sentence, const RowVecCRef<T>& att_v,
                       MatRef<T> alpha, MatRef<T> context, Mat<T>& scratch) {
  const Index R = q.rows(), n = q.cols(), S = memory.max_len;
  auto hidden = rows_of(scratch, S, n + 1);  // same shape as in the backward: no reallocation
  alpha.setZero();
  for (Index r = 0; r < R; ++r) {
    const Index b = row_sentence[r], len = memory.lengths[b];
    const auto keys = memory.keys->middleRows(b * S, len);
    const auto annotations = memory.annotations->middleRows(b * S, len);
    // tanh(q_i + K_j) for every source position j: len×n
    auto u = hidden.topRows(len).leftCols(n);
    attention_hidden<T>(keys, q.row(r), u);
    // e_ij = att_v · u_j, then a numerically stable softmax over j
    // (Both products are a sentence's own, of its length: the same whatever its batch.)
    auto a = alpha.row(r).head(len);
    a.noalias() = att_v * u.transpose();
    on_aligned_row<T>(a, [](auto e) {
      e = (e.array() - e.maxCoeff()).exp().matrix();
      e /= e.sum();
    });
    // c_i = Σ_j α_ij a_j
    context.row(r).noalias() = a * annotations;
  }
}

template <class T>
void attention_backward(const MatCRef<T>& dcontext, const MatCRef<T>* dalpha, const MatCRef<T>& q,
                        const AttentionMemory<T>& memory, const int* row_sentence,
                        const RowVecCRef<T>& att_v, const MatCRef<T>& alpha,
                        MatRef<T> dq, Mat<T>& dkeys, Mat<T>& dannotations,
                        RowVecRef<T> datt_v, Mat<T>& scratch) {
  const Index R = q.rows(), n = q.cols(), S = memory.max_len;
  auto hidden = rows_of(scratch, S, n + 1);  // u (len×n) and the per-position de (len×1)
  for (Index r = 0; r < R; ++r) {
    const Index b = row_sentence[r], len = memory.lengths[b];
    const auto keys = memory.keys->middleRows(b * S, len);
    const auto annotations = memory.annotations->middleRows(b * S, len);
    const auto a = alpha.row(r).head(len);
    auto u = hidden.topRows(len).leftCols(n);
    auto de = hidden.topRows(len).rightCols(1);
    // c = Σ α_j a_j:  dα_j = dc · a_j (+ a cost's own dα_j),  da_j += α_j dc
    de.noalias() = annotations * dcontext.row(r).transpose();
    if (dalpha) de += dalpha->row(r).head(len).transpose();
    dannotations.middleRows(b * S, len).noalias() += a.transpose() * dcontext.row(r);
    // softmax: de_j = α_j (dα_j - Σ_k α_k dα_k)
    const T weighted = (a.array() * de.transpose().array()).sum();
    de = (a.transpose().array() * (de.array() - weighted)).matrix();
    // e_j = att_v · u_j with u_j = tanh(q + K_j):  datt_v += Σ_j de_j u_j
    attention_hidden<T>(keys, q.row(r), u);
    datt_v.noalias() += de.transpose() * u;
    // d(q + K_j) = de_j att_v ∘ (1 - u_j²): to K_j directly, summed over j for q
    auto dq_r = dq.row(r);
    dq_r.setZero();
    for (Index j = 0; j < len; ++j) {
      auto du_j = u.row(j);
      du_j = (de(j, 0) * att_v.array() * (1 - du_j.array().square())).matrix();
      dkeys.row(b * S + j) += du_j;
      dq_r += du_j;
    }
  }
}

#define RNNSEARCH_INSTANTIATE_ATTENTION(T)                                                      \
  template void attention_forward<T>(const MatCRef<T>&, const AttentionMemory<T>&, \
                                     const int*, const RowVecCRef<T>&,            \
                                     MatRef<T>, MatRef<T>, Mat<T>&);          \
  template void attention_backward<T>(const MatCRef<T>&, const MatCRef<T>*, const MatCRef<T>&, \
                                      const AttentionMemory<T>&, const int*,                    \
                                      const RowVecCRef<T>&,                       \
                                      const MatCRef<T>&, MatRef<T>,      \
                                      Mat<T>&, Mat<T>&, RowVecRef<T>, Mat<T>&);
RNNSEARCH_INSTANTIATE_ATTENTION(float)
RNNSEARCH_INSTANTIATE_ATTENTION(double)

}  // namespace rnnsearch
