#include "rnnsearch/model/decoder_step.h"

#include "rnnsearch/util/profile.h"

namespace rnnsearch {

template <class T>
void decoder_recurrence(const Parameters<T>& params, const AttentionMemory<T>& memory, const int* row_sentence,
                        const T* moving, const MatCRef<T>& s_prev, Mat<T>& gru_scratch, Mat<T>& attention_scratch,
                        DecoderRecurrenceOutputs<T> out) {
  {
    profile::ScopedPhase phase(profile::Phase::attention_forward);
    // q = s_prev att_W;  α, c = attention(q)
    out.queries.noalias() = s_prev * params.mat(att_W);
    attention_forward<T>(out.queries, memory, row_sentence, params.vec(att_v), out.alpha, out.context,
                         attention_scratch);
  }
  profile::ScopedPhase phase(profile::Phase::decoder_gru_forward);
  // g = g_E + c dec_C, or g_E + LN_C(c dec_C);  s = GRU(g, s_prev)
  if (out.context_norm) {
    auto product = rows_of(gru_scratch, s_prev.rows(), out.cache.gates.cols());  // (the GRU's scratch after)
    product.noalias() = out.context * params.mat(dec_C);
    layer_norm_forward<T>(product, *out.context_norm);
    out.cache.gates += product;
  } else {
    out.cache.gates.noalias() += out.context * params.mat(dec_C);
  }
  gru_step_forward<T>(s_prev, params.mat(dec_U), moving, out.cache,
                      rows_of(gru_scratch, s_prev.rows(), out.cache.gates.cols()), out.state);
}

template <class T>
void decoder_recurrence_backward(const Parameters<T>& params, const AttentionMemory<T>& memory,
                                 const int* row_sentence, const T* moving, const MatCRef<T>& s_prev,
                                 DecoderRecurrenceOutputs<T> forward, const MatCRef<T>& ds,
                                 DecoderRecurrenceGradients<T> grad, Mat<T>& dkeys, Mat<T>& dannotations,
                                 Parameters<T>& grads, Mat<T>& gru_scratch, Mat<T>& attention_scratch) {
  {
    profile::ScopedPhase phase(profile::Phase::decoder_gru_backward);
    // s = GRU(g, s_prev)
    auto dg = forward.cache.gates;
    gru_step_backward<T>(ds, s_prev, params.mat(dec_U), moving, dg, rows_of(gru_scratch, s_prev.rows(), dg.cols()),
                         grad.s_prev, forward.cache.norm);
    // g = g_E + c dec_C, or g_E + LN_C(c dec_C): the product's gradient is dg, or LN_C's backward of it
    if (forward.context_norm) {
      layer_norm_backward<T>(dg, *forward.context_norm);
      grad.context.noalias() += forward.context_norm->hat * params.mat(dec_C).transpose();
    } else {
      grad.context.noalias() += dg * params.mat(dec_C).transpose();
    }
  }
  profile::ScopedPhase phase(profile::Phase::attention_backward);
  // α, c = attention(q)
  attention_backward<T>(grad.context, forward.queries, memory, row_sentence, params.vec(att_v), forward.alpha,
                        grad.queries, dkeys, dannotations, grads.vec(att_v), attention_scratch);
  // q = s_prev att_W
  grad.s_prev.noalias() += grad.queries * params.mat(att_W).transpose();
}

template <class T>
void decoder_recurrence_weight_grads(const MatCRef<T>& s_prev_all, const MatCRef<T>& r_h_all,
                                     const MatCRef<T>& contexts_all, const MatCRef<T>& dPU_all,
                                     const MatCRef<T>& dPC_all, const MatCRef<T>& dqueries_all, Parameters<T>& grads) {
  profile::ScopedPhase phase(profile::Phase::decoder_weight_grads);
  gru_accumulate_dU<T>(s_prev_all, r_h_all, dPU_all, grads.mat(dec_U));
  grads.mat(att_W).noalias() += s_prev_all.transpose() * dqueries_all;  // q = s_prev att_W
  grads.mat(dec_C).noalias() += contexts_all.transpose() * dPC_all;     // g = ... + c dec_C
}

template <class T>
void decoder_step(const Parameters<T>& params, const AttentionMemory<T>& memory, const int* row_sentence,
                  const MatCRef<T>& s_prev, const int* y_prev, DecoderStepWorkspace<T>& ws,
                  const OutputShortlist<T>* shortlist) {
  const ModelConfig& cfg = params.config();
  const Index R = s_prev.rows(), n = cfg.hidden, e = cfg.emb;
  // E = tgt_emb[y_prev];  g_E = E dec_W + dec_b
  auto E = rows_of(ws.E, R, e);
  for (Index r = 0; r < R; ++r) E.row(r) = params.mat(tgt_emb).row(y_prev[r]);
  // g_E = E dec_W + dec_b, or LN_W(E dec_W) + dec_b
  if (cfg.layer_norm)
    for (NormBuffers<T>* norm : {&ws.W_norm, &ws.C_norm, &ws.U_norm}) norm->size(R, 3 * n);
  auto g_E = rows_of(ws.gates, R, 3 * n);
  gru_input_forward<T>(E, params.mat(dec_W), params.vec(dec_b), layer_norm_of<T>(params, dec_W, ws.W_norm, 0, R, nullptr),
                       g_E);
  ws.moving.assign(R, T(1));
  auto X = rows_of(ws.X, R, cfg.output_input());  // [s, E, c]: c is written in place
  auto states = rows_of(ws.states, R, n);
  decoder_recurrence<T>(params, memory, row_sentence, ws.moving.data(), s_prev, ws.gru_scratch,
                        ws.attention_scratch,
                        {rows_of(ws.queries, R, n), rows_of(ws.alpha, R, memory.max_len), X.rightCols(2 * n),
                         {g_E, rows_of(ws.r_h, R, n),
                          layer_norm_of<T>(params, dec_U, ws.U_norm, 0, R, nullptr)},
                         states, layer_norm_of<T>(params, dec_C, ws.C_norm, 0, R, nullptr)});
  // log p(y | ...) from [s_prev (maxout) or s (linear), E, c]
  if (cfg.output == OutputKind::maxout)
    X.leftCols(n) = s_prev;
  else
    X.leftCols(n) = states;
  X.middleCols(n, e) = E;
  const Index V = shortlist ? static_cast<Index>(shortlist->words.size()) : cfg.tgt_vocab;
  auto log_probs = rows_of(ws.log_probs, R, V);
  output_forward<T>(params, X, ws.output, log_probs, shortlist);
  log_softmax_rows<T>(log_probs);
}

#define RNNSEARCH_INSTANTIATE_DECODER_RECURRENCE(T)                                                         \
  template void decoder_recurrence<T>(const Parameters<T>&, const AttentionMemory<T>&, const int*, const T*,      \
                                      const MatCRef<T>&, Mat<T>&, Mat<T>&, DecoderRecurrenceOutputs<T>);       \
  template void decoder_recurrence_backward<T>(                                                                \
      const Parameters<T>&, const AttentionMemory<T>&, const int*, const T*, const MatCRef<T>&,                \
      DecoderRecurrenceOutputs<T>, const MatCRef<T>&, DecoderRecurrenceGradients<T>, Mat<T>&, Mat<T>&,         \
      Parameters<T>&, Mat<T>&, Mat<T>&);                                                                       \
  template void decoder_recurrence_weight_grads<T>(                                                            \
      const MatCRef<T>&, const MatCRef<T>&, const MatCRef<T>&, const MatCRef<T>&, const MatCRef<T>&,          \
      const MatCRef<T>&, Parameters<T>&);
RNNSEARCH_INSTANTIATE_DECODER_RECURRENCE(float)
RNNSEARCH_INSTANTIATE_DECODER_RECURRENCE(double)
template void decoder_step<float>(const Parameters<float>&, const AttentionMemory<float>&, const int*,
                                  const MatCRef<float>&, const int*, DecoderStepWorkspace<float>&,
                                  const OutputShortlist<float>*);
template void decoder_step<double>(const Parameters<double>&, const AttentionMemory<double>&, const int*,
                                   const MatCRef<double>&, const int*, DecoderStepWorkspace<double>&,
                                   const OutputShortlist<double>*);

}  // namespace rnnsearch
