#include "rnnsearch/model/decoder_step.h"

#include <stdexcept>
#include <string>

#include "rnnsearch/model/products.h"
#include "rnnsearch/util/profile.h"

namespace rnnsearch {

namespace {

// q = query_state att_W;  α, c = attention(q)
template <class T>
void attend(const Parameters<T>& params, const AttentionMemory<T>& memory, const int* row_sentence,
            const MatCRef<T>& query_state, Mat<T>& attention_scratch, DecoderRecurrenceOutputs<T> out) {
  profile::ScopedPhase phase(profile::Phase::attention_forward);
  multiply(out.queries, query_state, params.mat(att_W));
  attention_forward<T>(out.queries, memory, row_sentence, params.vec(att_v), out.alpha, out.context,
                       attention_scratch);
}

// α, c = attention(q);  d query_state += d q att_Wᵀ
template <class T>
void attend_backward(const Parameters<T>& params, const AttentionMemory<T>& memory, const int* row_sentence,
                     DecoderRecurrenceOutputs<T> forward, DecoderRecurrenceGradients<T> grad,
                     MatRef<T> dquery_state, Mat<T>& dkeys, Mat<T>& dannotations, Parameters<T>& grads,
                     Mat<T>& attention_scratch) {
  profile::ScopedPhase phase(profile::Phase::attention_backward);
  attention_backward<T>(grad.context, grad.alpha, forward.queries, memory, row_sentence, params.vec(att_v), forward.alpha,
                        grad.queries, dkeys, dannotations, grads.vec(att_v), attention_scratch);
  dquery_state.noalias() += grad.queries * params.mat(att_W).transpose();
}

// The conditional decoder's cell k ≥ 2 at this step: its rows of out.cells and parameters.
template <class T>
struct CellStep {
  TransitionBuffers<T>& buffers;
  Transition param;
  MatRef<T> input, gates, r_h;
};
template <class T>
CellStep<T> cell_step(const Parameters<T>& params, const DecoderRecurrenceOutputs<T>& out, Index R, int k) {
  TransitionBuffers<T>& t = (*out.cells)[k - 2];
  return {t, dec_cell(params.config(), k), t.input.middleRows(out.first, R), t.gates.middleRows(out.first, R),
          t.r_h.middleRows(out.first, R)};
}

}  // namespace

template <class T>
void decoder_recurrence(const Parameters<T>& params, const AttentionMemory<T>& memory, const int* row_sentence,
                        const T* moving, const MatCRef<T>& s_prev, Mat<T>& gru_scratch, Mat<T>& attention_scratch,
                        DecoderRecurrenceOutputs<T> out) {
  const Index R = s_prev.rows(), n = s_prev.cols();
  const int depth = params.config().dec_cell_base_depth;
  if (depth == 1) {
    attend<T>(params, memory, row_sentence, s_prev, attention_scratch, out);  // from s_prev
    profile::ScopedPhase phase(profile::Phase::decoder_gru_forward);
    // g = g_E + c dec_C, or g_E + LN_C(c dec_C);  s = GRU(g, s_prev)
    if (out.context_norm) {
      auto product = rows_of(gru_scratch, R, 3 * n);  // (the GRU's scratch after)
      multiply(product, out.context, params.mat(dec_C));
      auto g = out.cache.gates;
      layer_norm_forward<T>(product, {g.data(), g.outerStride()}, g, *out.context_norm);  // g += LN_C(product)
    } else {
      multiply(out.cache.gates, out.context, params.mat(dec_C), true);
    }
    gru_step_forward<T>(s_prev, params.mat(dec_U), moving, out.cache, rows_of(gru_scratch, R, 3 * n), out.state);
    return;
  }
  // The conditional GRU: s' = GRU(g_E, s_prev) is cell 2's input
  auto scratch = rows_of(gru_scratch, R, 3 * n);
  const MatRef<T> s_mid = cell_step(params, out, R, 2).input;
  {
    profile::ScopedPhase phase(profile::Phase::decoder_gru_forward);
    gru_step_forward<T>(s_prev, params.mat(dec_U), moving, out.cache, scratch, s_mid);
  }
  attend<T>(params, memory, row_sentence, s_mid, attention_scratch, out);  // from s'
  profile::ScopedPhase phase(profile::Phase::decoder_gru_forward);
  for (int k = 2; k <= depth; ++k) {
    CellStep<T> cell = cell_step(params, out, R, k);
    // cell 2: g = c dec_C + b_2, or LN_C(c dec_C) + b_2; cells 3..B: g = b_k
    if (k == 2)
      gru_input_forward<T>(out.context, params.mat(dec_C), params.vec(cell.param.b), out.context_norm, cell.gates);
    else
      cell.gates.rowwise() = params.vec(cell.param.b);
    gru_step_forward<T>(cell.input, params.mat(cell.param.U), moving,
                        {cell.gates, cell.r_h,
                         layer_norm_of<T>(params, cell.param.U, cell.buffers.u_norm, out.first, R, nullptr),
                         cell.buffers.dropout.step(out.first, R)},
                        scratch, k < depth ? cell_step(params, out, R, k + 1).input : out.state);
  }
}

template <class T>
void decoder_recurrence_backward(const Parameters<T>& params, const AttentionMemory<T>& memory,
                                 const int* row_sentence, const T* moving, const MatCRef<T>& s_prev,
                                 DecoderRecurrenceOutputs<T> forward, const MatCRef<T>& ds,
                                 DecoderRecurrenceGradients<T> grad, Mat<T>& dkeys, Mat<T>& dannotations,
                                 Parameters<T>& grads, Mat<T>& gru_scratch, Mat<T>& attention_scratch) {
  const Index R = s_prev.rows(), n = s_prev.cols();
  const int depth = params.config().dec_cell_base_depth;
  auto scratch = rows_of(gru_scratch, R, 3 * n);
  // the product c dec_C's gradient, dg (of the step's GRU, or of cell 2) or LN_C's backward of it
  auto context_backward = [&](MatRef<T> dg) {
    if (forward.context_norm) {
      layer_norm_backward<T>(dg, *forward.context_norm);
      grad.context.noalias() += forward.context_norm->hat * params.mat(dec_C).transpose();
    } else {
      grad.context.noalias() += dg * params.mat(dec_C).transpose();
    }
  };
  if (depth == 1) {
    {
      profile::ScopedPhase phase(profile::Phase::decoder_gru_backward);
      // s = GRU(g, s_prev);  g = g_E + c dec_C, or g_E + LN_C(c dec_C)
      gru_step_backward<T>(ds, s_prev, params.mat(dec_U), moving, forward.cache.gates, scratch, grad.s_prev,
                           forward.cache.norm, forward.cache.dropout);
      context_backward(forward.cache.gates);
    }
    attend_backward<T>(params, memory, row_sentence, forward, grad, grad.s_prev, dkeys, dannotations, grads,
                       attention_scratch);  // q = s_prev att_W
    return;
  }
  // The conditional GRU, cells B..2: each adds its input's gradient to the previous cell's
  // dinput (cell 2's: d s')
  {
    profile::ScopedPhase phase(profile::Phase::decoder_gru_backward);
    for (int k = depth; k >= 2; --k) {
      CellStep<T> cell = cell_step(params, forward, R, k);
      auto dinput = rows_of(cell.buffers.dinput, R, n);
      dinput.setZero();
      gru_step_backward<T>(k == depth ? ds : MatCRef<T>((*forward.cells)[k - 1].dinput.topRows(R)), cell.input,
                           params.mat(cell.param.U), moving, cell.gates, scratch, dinput,
                           layer_norm_of<T>(params, cell.param.U, cell.buffers.u_norm, forward.first, R, &grads),
                           cell.buffers.dropout.step(forward.first, R));
      if (k == 2) context_backward(cell.gates);  // g = c dec_C + b_2 (b_2's gradient: transition_weight_grads)
    }
  }
  auto ds_mid = (*forward.cells)[0].dinput.topRows(R);
  attend_backward<T>(params, memory, row_sentence, forward, grad, ds_mid, dkeys, dannotations, grads,
                     attention_scratch);  // q = s' att_W
  profile::ScopedPhase phase(profile::Phase::decoder_gru_backward);
  // s' = GRU(g_E, s_prev)
  gru_step_backward<T>(ds_mid, s_prev, params.mat(dec_U), moving, forward.cache.gates, scratch, grad.s_prev,
                       forward.cache.norm, forward.cache.dropout);
}

template <class T>
void decoder_recurrence_weight_grads(const MatCRef<T>& query_states_all, const MatCRef<T>& s_prev_all,
                                     const MatCRef<T>& r_h_all, const MatCRef<T>& contexts_all,
                                     const MatCRef<T>& dPU_all, const MatCRef<T>& dPC_all,
                                     const MatCRef<T>& dqueries_all, Parameters<T>& grads) {
  profile::ScopedPhase phase(profile::Phase::decoder_weight_grads);
  gru_accumulate_dU<T>(s_prev_all, r_h_all, dPU_all, grads.mat(dec_U));
  grads.mat(att_W).noalias() += query_states_all.transpose() * dqueries_all;  // q = s_prev (or s') att_W
  grads.mat(dec_C).noalias() += contexts_all.transpose() * dPC_all;           // g = ... + c dec_C
}

template <class T>
void decoder_step(const Parameters<T>& params, const AttentionMemory<T>& memory, const int* row_sentence,
                  const MatCRef<T>& s_prev, const int* y_prev, DecoderStepWorkspace<T>& ws,
                  const OutputShortlist<T>* shortlist) {
  const ModelConfig& cfg = params.config();
  const Index R = s_prev.rows(), n = cfg.hidden, e = cfg.emb;
  if (s_prev.cols() != cfg.state_width())
    throw std::logic_error("decoder_step: s_prev has " + std::to_string(s_prev.cols()) + " columns, not the state width " +
                           std::to_string(cfg.state_width()));
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
  ws.cells.resize(cfg.dec_cell_base_depth - 1);
  for (TransitionBuffers<T>& cell : ws.cells) cell.size(R, n, cfg.layer_norm);
  auto X = rows_of(ws.X, R, cfg.output_input());  // [s, E, c]: c is written in place
  auto states = rows_of(ws.states, R, cfg.state_width());
  decoder_recurrence<T>(params, memory, row_sentence, ws.moving.data(), s_prev.leftCols(n), ws.gru_scratch,
                        ws.attention_scratch,
                        {rows_of(ws.queries, R, n), rows_of(ws.alpha, R, memory.max_len), X.rightCols(2 * n),
                         {g_E, rows_of(ws.r_h, R, n),
                          layer_norm_of<T>(params, dec_U, ws.U_norm, 0, R, nullptr)},
                         states.leftCols(n), layer_norm_of<T>(params, dec_C, ws.C_norm, 0, R, nullptr), &ws.cells, 0});
  // --dec-depth: layer l's step reads layer l−1's output and continues its own state (§1.4)
  ws.layers.resize(cfg.dec_depth - 1);
  for (int l = 2; l <= cfg.dec_depth; ++l) {
    profile::ScopedPhase phase(profile::Phase::decoder_gru_forward);
    const MatCRef<T> h_prev = s_prev.middleCols((l - 1) * n, n);
    const MatCRef<T> input = l == 2 ? MatCRef<T>(states.leftCols(n))
                                    : gru_layer_output(dec_layer(cfg, l - 1), ws.layers[l - 3], 1, R);
    gru_layer_forward<T>(params, dec_layer(cfg, l), input, ws.moving.data(), 1, R, &h_prev, ws.layers[l - 2],
                         ws.gru_scratch);
    states.middleCols((l - 1) * n, n) = step_rows(ws.layers[l - 2].states, 1, R);
  }
  // log p(y | ...) from [s_prev (the paper's maxout), s or the top layer's output, E, c]
  if (cfg.output_reads_previous_state())
    X.leftCols(n) = s_prev;
  else if (cfg.dec_depth > 1)
    X.leftCols(n) = gru_layer_output(dec_layer(cfg, cfg.dec_depth), ws.layers.back(), 1, R);
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
      const MatCRef<T>&, const MatCRef<T>&, Parameters<T>&);
RNNSEARCH_INSTANTIATE_DECODER_RECURRENCE(float)
RNNSEARCH_INSTANTIATE_DECODER_RECURRENCE(double)
template void decoder_step<float>(const Parameters<float>&, const AttentionMemory<float>&, const int*,
                                  const MatCRef<float>&, const int*, DecoderStepWorkspace<float>&,
                                  const OutputShortlist<float>*);
template void decoder_step<double>(const Parameters<double>&, const AttentionMemory<double>&, const int*,
                                   const MatCRef<double>&, const int*, DecoderStepWorkspace<double>&,
                                   const OutputShortlist<double>*);

}  // namespace rnnsearch
