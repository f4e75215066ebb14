#include "rnnsearch/model/alignment_output.h"

#include "rnnsearch/model/products.h"

namespace rnnsearch {

template <class T>
void alignment_output_forward(const Parameters<T>& params, const AlignmentSource<T>& source, const int* row_sentence,
                              AlignmentOutputWorkspace<T>& ws) {
  const AlignmentOutputParams p = alignment_output_params(params.config());
  const Index R = ws.rows, N = params.config().alignment_output, S = source.max_len;
  const Index source_rows = source.sentences * S, two_n = source.annotations->cols();
  // K = A aln_U + aln_b: the keys of every source position
  auto keys = rows_of(ws.keys, source_rows, N);
  multiply(keys, source.annotations->topRows(source_rows), params.mat(p.U));
  keys.rowwise() += params.vec(p.b);
  // q = u aln_W
  auto queries = rows_of(ws.queries, R, N);
  multiply(queries, ws.input.topRows(R), params.mat(p.W));
  // β = softmax(aln_v · tanh(q + K)) over each row's sentence
  const AttentionMemory<T> memory{source.annotations, &ws.keys, S, source.lengths};
  attention_forward<T>(queries, memory, row_sentence, params.vec(p.v), rows_of(ws.alpha, R, S),
                       rows_of(ws.context, R, two_n), ws.scratch);
}

template <class T>
void alignment_output_backward(const Parameters<T>& params, const AlignmentSource<T>& source, const int* row_sentence,
                               bool to_inputs, AlignmentOutputWorkspace<T>& ws, Parameters<T>& grads) {
  const AlignmentOutputParams p = alignment_output_params(params.config());
  const Index R = ws.rows, N = params.config().alignment_output, S = source.max_len;
  const Index source_rows = source.sentences * S, two_n = source.annotations->cols();
  const auto annotations = source.annotations->topRows(source_rows);
  // through the softmax and tanh: dq, dK and daln_v (attention.h); no gradient comes through
  // the context, so the annotations get theirs from the keys alone
  auto dcontext = rows_of(ws.dcontext, R, two_n);
  dcontext.setZero();
  auto dqueries = rows_of(ws.dqueries, R, N);
  auto dkeys = rows_of(ws.dkeys, source_rows, N);
  dkeys.setZero();
  rows_of(ws.dannotations, source_rows, two_n).setZero();
  const AttentionMemory<T> memory{source.annotations, &ws.keys, S, source.lengths};
  const MatCRef<T> dalpha = ws.dalpha.topRows(R);
  attention_backward<T>(dcontext, &dalpha, ws.queries.topRows(R), memory, row_sentence, params.vec(p.v), ws.alpha.topRows(R), dqueries,
                        ws.dkeys, ws.dannotations, grads.vec(p.v), ws.scratch);
  // q = u aln_W:  daln_W += uᵀ dq,  du = dq aln_Wᵀ
  const auto input = ws.input.topRows(R);
  grads.mat(p.W).noalias() += input.transpose() * dqueries;
  // K = A aln_U + aln_b:  daln_U += Aᵀ dK,  daln_b += Σ_rows dK,  dA = dK aln_Uᵀ
  grads.mat(p.U).noalias() += annotations.transpose() * dkeys;
  grads.vec(p.b) += dkeys.colwise().sum();
  if (!to_inputs) return;
  rows_of(ws.dinput, R, input.cols()).noalias() = dqueries * params.mat(p.W).transpose();
  ws.dannotations.topRows(source_rows).noalias() += dkeys * params.mat(p.U).transpose();
}

#define RNNSEARCH_INSTANTIATE_ALIGNMENT_OUTPUT(T)                                                               \
  template void alignment_output_forward<T>(const Parameters<T>&, const AlignmentSource<T>&, const int*,       \
                                            AlignmentOutputWorkspace<T>&);                                     \
  template void alignment_output_backward<T>(const Parameters<T>&, const AlignmentSource<T>&, const int*, bool, \
                                             AlignmentOutputWorkspace<T>&, Parameters<T>&);
RNNSEARCH_INSTANTIATE_ALIGNMENT_OUTPUT(float)
RNNSEARCH_INSTANTIATE_ALIGNMENT_OUTPUT(double)

}  // namespace rnnsearch
