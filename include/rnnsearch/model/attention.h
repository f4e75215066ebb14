#pragma once
// Additive attention of docs/design.md §1 for R decoder rows at one step:
//
//   e_ij = att_v · tanh(q_i + K_j)        q_i = s_{i-1} att_W (the caller's GEMM)
//   α_i  = softmax over the row's source positions j < length (padding gets 0)
//   c_i  = Σ_j α_ij a_j
//
// The source side (annotations a, keys K = a att_U + att_b) is batch-major: sentence b's
// positions are the rows b*S .. b*S+S-1. A decoder row r attends to sentence
// row_sentence[r], so the live hypotheses of a beam share their sentence's memory.
#include "rnnsearch/model/tensor.h"

namespace rnnsearch {

template <class T>
struct AttentionMemory {
  const Mat<T>* annotations;  // Bs*S × 2n
  const Mat<T>* keys;         // Bs*S × n
  Index max_len;              // S
  const int* lengths;         // Bs, </s> included
};

// q: R×n. Writes alpha (R×S, zeros past each length) and context (R×2n).
// scratch: at least S×n, reused for every row.
template <class T>
void attention_forward(const Eigen::Ref<const Mat<T>>& q, const AttentionMemory<T>& memory,
                       const int* row_sentence, const Eigen::Ref<const RowVec<T>>& att_v,
                       Eigen::Ref<Mat<T>> alpha, Eigen::Ref<Mat<T>> context, Mat<T>& scratch);

// dcontext: R×2n. Writes dq (R×n); accumulates into dkeys, dannotations (Bs*S rows) and
// datt_v. The tanh values are recomputed rather than kept from the forward: they would
// be T×B×S×n numbers, the largest activation of the model.
template <class T>
void attention_backward(const Eigen::Ref<const Mat<T>>& dcontext, const Eigen::Ref<const Mat<T>>& q,
                        const AttentionMemory<T>& memory, const int* row_sentence,
                        const Eigen::Ref<const RowVec<T>>& att_v, const Eigen::Ref<const Mat<T>>& alpha,
                        Eigen::Ref<Mat<T>> dq, Mat<T>& dkeys, Mat<T>& dannotations,
                        Eigen::Ref<RowVec<T>> datt_v, Mat<T>& scratch);

}  // namespace rnnsearch
