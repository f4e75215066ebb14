#include "rnnsearch/model/encoder.h"

#include <algorithm>
#include <optional>

#include "rnnsearch/model/dropout.h"
#include "rnnsearch/model/gru.h"
#include "rnnsearch/model/layer_norm.h"

namespace rnnsearch {
namespace {

struct DirectionParams {
  Param W, U, b;
  bool reverse;  // the backward GRU visits positions S-1 .. 0 (and has its own parameters)
  int layer;     // 1 .. enc_depth
};
DirectionParams direction_params(const ModelConfig& c, bool reverse, int layer) {
  const EncoderLayer p = enc_layer(c, reverse, layer);
  return {p.W, p.U, p.b, reverse, layer};
}

// The state blocks a step at position j reads and writes (see EncoderDirection::states).
Index prev_block(const DirectionParams& d, Index j) { return d.reverse ? j + 1 : j; }
Index out_block(const DirectionParams& d, Index j) { return d.reverse ? j : j + 1; }

// Where transition k (1..N) of the step at position j writes its output: the next
// transition's input, or the direction's state (k = N).
template <class T>
MatRef<T> transition_output(EncoderDirection<T>& d, const DirectionParams& p, Index k, Index j, Index B) {
  const Index N = static_cast<Index>(d.deep.size()) + 1;
  return k < N ? step_rows(d.deep[k - 1].input, j, B) : step_rows(d.states, out_block(p, j), B);
}

// Row j*B + b of a direction's states (S+1 blocks) that holds its output at position j:
// blocks 1..S forwards, 0..S-1 backwards.
template <class M>
auto output_rows(M&& states, bool reverse, Index S, Index B) {
  return states.middleRows(reverse ? 0 : B, S * B);
}

// X: the layer's input, S*B rows (x for layer 1, the layer below's output otherwise).
template <class T>
void direction_forward(const Parameters<T>& params, const DirectionParams& p, const MatCRef<T>& X,
                       EncoderWorkspace<T>& ws, EncoderDirection<T>& d) {
  const ModelConfig& c = params.config();
  const Index B = ws.batch, S = ws.max_len, n = c.hidden, N = c.enc_cell_depth;
  // [a_r | a_z | a_h] = x_j W + b, or LN_W(x_j W) + b, for every position at once
  if (c.layer_norm)
    for (NormBuffers<T>* norm : {&d.w_norm, &d.u_norm}) norm->size(S * B, 3 * n);
  auto gates = rows_of(d.gates, S * B, 3 * n);
  gru_input_forward<T>(X, params.mat(p.W), params.vec(p.b), layer_norm_of<T>(params, p.W, d.w_norm, 0, S * B, nullptr),
                       gates);
  // transitions 2..N have no input product: g = b_k at every position
  d.deep.resize(N - 1);
  for (Index k = 2; k <= N; ++k) {
    TransitionBuffers<T>& t = d.deep[k - 2];
    t.size(S * B, n, c.layer_norm);
    t.gates.topRows(S * B).rowwise() = params.vec(enc_transition(c, p.reverse, k, p.layer).b);
  }
  auto states = rows_of(d.states, (S + 1) * B, n);
  auto r_h = rows_of(d.r_h, S * B, n);
  auto scratch = rows_of(ws.gru_scratch, B, 3 * n);
  step_rows(states, p.reverse ? S : 0, B).setZero();  // h_0 = 0
  for (Index i = 0; i < S; ++i) {
    const Index j = p.reverse ? S - 1 - i : i;
    gru_step_forward<T>(step_rows(states, prev_block(p, j), B), params.mat(p.U), &ws.moving[j * B],
                        {step_rows(gates, j, B), step_rows(r_h, j, B),
                         layer_norm_of<T>(params, p.U, d.u_norm, j * B, B, nullptr)},
                        scratch, transition_output(d, p, 1, j, B));
    for (Index k = 2; k <= N; ++k) {
      TransitionBuffers<T>& t = d.deep[k - 2];
      const Param U = enc_transition(c, p.reverse, k, p.layer).U;
      gru_step_forward<T>(step_rows(t.input, j, B), params.mat(U), &ws.moving[j * B],
                          {step_rows(t.gates, j, B), step_rows(t.r_h, j, B),
                           layer_norm_of<T>(params, U, t.u_norm, j * B, B, nullptr)},
                          scratch, transition_output(d, p, k, j, B));
    }
  }
  // --skip: layer l ≥ 2 outputs its state plus its input
  if (c.skip && p.layer > 1) rows_of(d.skip_output, S * B, n) = output_rows(states, p.reverse, S, B) + X;
}

// A layer's output, S*B rows: its states, or with --skip (l ≥ 2) their sum with its input.
template <class T>
MatCRef<T> layer_output(const ModelConfig& c, const DirectionParams& p, const EncoderDirection<T>& d, Index S,
                        Index B) {
  if (c.skip && p.layer > 1) return d.skip_output.topRows(S * B);
  return output_rows(d.states, p.reverse, S, B);
}

// From d.doutput (S*B × n, the gradient of the layer's output): every parameter gradient of
// the layer, and the gradient of its input X, written to dX (accumulate: added to it).
template <class T>
void direction_backward(const Parameters<T>& params, const DirectionParams& p, const MatCRef<T>& X,
                        EncoderWorkspace<T>& ws, EncoderDirection<T>& d, Parameters<T>& grads, MatRef<T> dX,
                        bool accumulate) {
  const ModelConfig& c = params.config();
  const Index B = ws.batch, S = ws.max_len, n = c.hidden, N = c.enc_cell_depth;
  auto states = d.states.topRows((S + 1) * B);
  auto dstates = rows_of(d.dstates, (S + 1) * B, n);
  dstates.setZero();
  output_rows(dstates, p.reverse, S, B) = d.doutput.topRows(S * B);
  auto dg = d.gates.topRows(S * B);  // each step's gates, until the step's backward replaces them by dg
  auto scratch = ws.gru_scratch.topRows(B);
  for (TransitionBuffers<T>& t : d.deep) rows_of(t.dinput, B, n);
  for (Index i = S - 1; i >= 0; --i) {  // the forward's visiting order, reversed
    const Index j = p.reverse ? S - 1 - i : i;
    // transitions N..2: the gradient of tᴺ_j is the state's, that of tᵏ⁻¹_j comes from transition k only
    for (Index k = N; k >= 2; --k) {
      TransitionBuffers<T>& t = d.deep[k - 2];
      const Param U = enc_transition(c, p.reverse, k, p.layer).U;
      t.dinput.setZero();
      gru_step_backward<T>(k == N ? MatCRef<T>(step_rows(dstates, out_block(p, j), B)) : MatCRef<T>(d.deep[k - 1].dinput.topRows(B)),
                           step_rows(t.input, j, B), params.mat(U), &ws.moving[j * B], step_rows(t.gates, j, B),
                           scratch, t.dinput.topRows(B), layer_norm_of<T>(params, U, t.u_norm, j * B, B, &grads));
    }
    gru_step_backward<T>(N > 1 ? MatCRef<T>(d.deep[0].dinput.topRows(B)) : MatCRef<T>(step_rows(dstates, out_block(p, j), B)),
                         step_rows(states, prev_block(p, j), B), params.mat(p.U), &ws.moving[j * B],
                         step_rows(dg, j, B), scratch, step_rows(dstates, prev_block(p, j), B),
                         layer_norm_of<T>(params, p.U, d.u_norm, j * B, B, &grads));
  }
  // Transitions 2..N: g = b_k, so db_k = Σ dg; dU_k from their inputs, as for U below
  for (Index k = 2; k <= N; ++k) {
    const Transition tp = enc_transition(c, p.reverse, k, p.layer);
    transition_weight_grads<T>(d.deep[k - 2], S * B, c.layer_norm, grads.mat(tp.U), grads.vec(tp.b));
  }
  // Row j*B+b of h_prev_all is the state the step at position j started from; the recurrent
  // products' gradient is dg, or the dP that replaced their x̂
  const auto h_prev_all = p.reverse ? states.bottomRows(S * B) : states.topRows(S * B);
  gru_accumulate_dU<T>(h_prev_all, d.r_h.topRows(S * B), c.layer_norm ? d.u_norm.hat.topRows(S * B) : dg,
                       grads.mat(p.U));
  // a = X W + b, or LN_W(X W) + b
  const MatCRef<T> dP = gru_input_backward<T>(X, dg, layer_norm_of<T>(params, p.W, d.w_norm, 0, S * B, &grads),
                                              grads.mat(p.W), grads.vec(p.b));
  if (accumulate)
    dX.noalias() += dP * params.mat(p.W).transpose();
  else
    dX.noalias() = dP * params.mat(p.W).transpose();
  // --skip: the output is state + X, so X's gradient also has the output's
  if (c.skip && p.layer > 1) dX += d.doutput.topRows(S * B);
}

}  // namespace

template <class T>
void encoder_forward(const Parameters<T>& params, const int* src, const int* lengths, Index B, Index S,
                     double dropout_rate, uint64_t dropout_seed, EncoderWorkspace<T>& ws) {
  const Index n = params.config().hidden, e = params.config().emb;
  ws.batch = B;
  ws.max_len = S;
  ws.lengths.assign(lengths, lengths + B);
  ws.tokens.assign(src, src + S * B);
  ws.moving.resize(S * B);
  for (Index j = 0; j < S; ++j)
    for (Index b = 0; b < B; ++b) ws.moving[j * B + b] = j < lengths[b] ? T(1) : T(0);

  // x_j = src_emb[w_j], with inverted dropout when training
  auto x = rows_of(ws.x, S * B, e);
  const auto embeddings = params.mat(src_emb);
  for (Index r = 0; r < S * B; ++r) x.row(r) = embeddings.row(src[r]);
  ws.dropout = dropout_rate > 0;
  if (ws.dropout) {
    auto mask = rows_of(ws.dropout_mask, S * B, e);
    draw_dropout_mask<T>(mask, dropout_rate, dropout_seed);
    x.array() *= mask.array();
  }

  // Each direction's stack: layer 1 reads x, layer l the output of layer l−1
  const ModelConfig& c = params.config();
  const int L = c.enc_depth;
  for (auto* layers : {&ws.fw, &ws.bw}) {
    const bool reverse = layers == &ws.bw;
    layers->resize(L);
    for (int l = 1; l <= L; ++l)
      direction_forward<T>(params, direction_params(c, reverse, l),
                           l == 1 ? MatCRef<T>(x) : layer_output(c, direction_params(c, reverse, l - 1), (*layers)[l - 2], S, B),
                           ws, (*layers)[l - 1]);
  }

  // a_j = [h→_j ; h←_j] of the top layers, batch-major
  const MatCRef<T> top_fw = layer_output(c, direction_params(c, false, L), ws.fw[L - 1], S, B);
  const MatCRef<T> top_bw = layer_output(c, direction_params(c, true, L), ws.bw[L - 1], S, B);
  auto annotations = rows_of(ws.annotations, B * S, 2 * n);
  for (Index b = 0; b < B; ++b)
    for (Index j = 0; j < S; ++j) {
      annotations.row(b * S + j).head(n) = top_fw.row(j * B + b);
      annotations.row(b * S + j).tail(n) = top_bw.row(j * B + b);
    }
  // K_j = a_j att_U + att_b
  auto keys = rows_of(ws.keys, B * S, n);
  keys.noalias() = annotations * params.mat(att_U);
  keys.rowwise() += params.vec(att_b);
  // s_0 = tanh(mean_j a_j init_W + init_b)
  auto mean = rows_of(ws.mean, B, 2 * n);
  for (Index b = 0; b < B; ++b)
    mean.row(b) = annotations.middleRows(b * S, lengths[b]).colwise().sum() / T(lengths[b]);
  auto s0 = rows_of(ws.s0, B, n);
  s0.noalias() = mean * params.mat(init_W);
  s0.rowwise() += params.vec(init_b);
  s0 = s0.array().tanh().matrix();
}

template <class T>
void encoder_backward(const Parameters<T>& params, EncoderWorkspace<T>& ws, Mat<T>& dannotations,
                      const Mat<T>& dkeys, const MatCRef<T>& ds0, Parameters<T>& grads) {
  const Index B = ws.batch, S = ws.max_len, n = params.config().hidden, e = params.config().emb;
  auto annotations = ws.annotations.topRows(B * S);
  auto dann = dannotations.topRows(B * S);

  // s_0 = tanh(pre):  dpre = ds_0 ∘ (1 - s_0²)
  auto dpre = rows_of(ws.dmean_pre, B, n);
  dpre = (ds0.array() * (1 - ws.s0.topRows(B).array().square())).matrix();
  // pre = mean init_W + init_b
  auto mean = ws.mean.topRows(B);
  grads.mat(init_W).noalias() += mean.transpose() * dpre;
  grads.vec(init_b) += dpre.colwise().sum();
  auto dmean = mean;  // the mean is no longer needed: its storage takes its gradient
  dmean.noalias() = dpre * params.mat(init_W).transpose();
  // mean = Σ_{j<len} a_j / len
  for (Index b = 0; b < B; ++b)
    dann.middleRows(b * S, ws.lengths[b]).rowwise() += dmean.row(b) / T(ws.lengths[b]);

  // K = a att_U + att_b
  const auto dk = dkeys.topRows(B * S);
  grads.mat(att_U).noalias() += annotations.transpose() * dk;
  grads.vec(att_b) += dk.colwise().sum();
  dann.noalias() += dk * params.mat(att_U).transpose();

  // a_j = [h→_j ; h←_j]: hand each half to its top layer's output gradient
  const ModelConfig& c = params.config();
  const int L = c.enc_depth;
  auto dfw = rows_of(ws.fw[L - 1].doutput, S * B, n);
  auto dbw = rows_of(ws.bw[L - 1].doutput, S * B, n);
  for (Index b = 0; b < B; ++b)
    for (Index j = 0; j < S; ++j) {
      dfw.row(j * B + b) = dann.row(b * S + j).head(n);
      dbw.row(j * B + b) = dann.row(b * S + j).tail(n);
    }

  // Down each stack: layer l's input gradient is layer l−1's output gradient, layer 1's is dx
  auto dx = rows_of(ws.dx, S * B, e);
  dx.setZero();
  for (auto* layers : {&ws.fw, &ws.bw}) {
    const bool reverse = layers == &ws.bw;
    for (int l = L; l >= 1; --l) {
      const DirectionParams below = direction_params(c, reverse, std::max(l - 1, 1));
      const MatCRef<T> X = l == 1 ? MatCRef<T>(ws.x.topRows(S * B)) : layer_output(c, below, (*layers)[l - 2], S, B);
      MatRef<T> dX = l == 1 ? MatRef<T>(dx) : MatRef<T>(rows_of((*layers)[l - 2].doutput, S * B, n));
      direction_backward<T>(params, direction_params(c, reverse, l), X, ws, (*layers)[l - 1], grads, dX, l == 1);
    }
  }

  // x_j = src_emb[w_j] (∘ dropout mask): scatter-add into the used embedding rows only
  if (ws.dropout) dx.array() *= ws.dropout_mask.topRows(S * B).array();
  auto demb = grads.mat(src_emb);
  for (Index j = 0; j < S; ++j)
    for (Index b = 0; b < B; ++b)
      if (ws.moving[j * B + b] != T(0)) demb.row(ws.tokens[j * B + b]) += dx.row(j * B + b);
}

#define RNNSEARCH_INSTANTIATE_ENCODER(T)                                                          \
  template void encoder_forward<T>(const Parameters<T>&, const int*, const int*, Index, Index, double, \
                                   uint64_t, EncoderWorkspace<T>&);                               \
  template void encoder_backward<T>(const Parameters<T>&, EncoderWorkspace<T>&, Mat<T>&, const Mat<T>&, \
                                    const MatCRef<T>&, Parameters<T>&);
RNNSEARCH_INSTANTIATE_ENCODER(float)
RNNSEARCH_INSTANTIATE_ENCODER(double)

}  // namespace rnnsearch
