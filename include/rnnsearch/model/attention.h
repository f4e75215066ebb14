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
#include "rnnsearch/kernels/tensor.h"

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
void attention_forward(const MatCRef<T>& q, const AttentionMemory<T>& memory,
                       const int* row_sentence, const RowVecCRef<T>& att_v,
                       MatRef<T> alpha, MatRef<T> context, Mat<T>& scratch);

// dcontext: R×2n; dalpha (R×S, or null): the gradient of a cost on α itself (guided
// alignment), added to what reaches α from c. Writes dq (R×n); accumulates into dkeys,
// dannotations (Bs*S rows) and datt_v. The tanh values are recomputed rather than kept from
// the forward: they would be T×B×S×n numbers, the largest activation of the model.
template <class T>
void attention_backward(const MatCRef<T>& dcontext, const MatCRef<T>* dalpha, const MatCRef<T>& q,
                        const AttentionMemory<T>& memory, const int* row_sentence,
                        const RowVecCRef<T>& att_v, const MatCRef<T>& alpha,
                        MatRef<T> dq, Mat<T>& dkeys, Mat<T>& dannotations,
                        RowVecRef<T> datt_v, Mat<T>& scratch);

}  // namespace rnnsearch
