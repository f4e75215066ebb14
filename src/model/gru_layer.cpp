#include "rnnsearch/model/gru_layer.h"

#include "rnnsearch/model/dropout.h"

namespace rnnsearch {
namespace {

// The state blocks the step at position j reads and writes (see GruLayer::states).
Index prev_block(const GruLayerParams& p, Index j) { return p.reverse ? j + 1 : j; }
Index out_block(const GruLayerParams& p, Index j) { return p.reverse ? j : j + 1; }

// Where transition k (1..N) of the step at position j writes its output: the next
// transition's input, or the layer's state (k = N).
template <class T>
MatRef<T> transition_output(GruLayer<T>& d, const GruLayerParams& p, Index k, Index j, Index B) {
  return k < p.depth ? step_rows(d.deep[k - 1].input, j, B) : step_rows(d.states, out_block(p, j), B);
}

// Rows j*B + b of a layer's (S+1)-block states that hold h_j: blocks 1..S forwards, 0..S-1
// in reverse.
template <class M>
auto state_rows(M&& states, bool reverse, Index S, Index B) {
  return states.middleRows(reverse ? 0 : B, S * B);
}

}  // namespace

template <class T>
void gru_layer_forward(const Parameters<T>& params, const GruLayerParams& p, const MatCRef<T>& X, const T* moving,
                       Index S, Index B, const MatCRef<T>* h0, GruLayer<T>& d, Mat<T>& scratch_buffer,
                       double rnn_dropout, uint64_t rnn_seed) {
  const ModelConfig& c = params.config();
  const Index n = c.hidden, N = p.depth;
  // [a_r | a_z | a_h] = x_j W + b, or LN_W(x_j W) + b, for every position at once
  if (c.layer_norm)
    for (NormBuffers<T>* norm : {&d.w_norm, &d.u_norm}) norm->size(S * B, 3 * n);
  auto gates = rows_of(d.gates, S * B, 3 * n);
  gru_input_forward<T>(X, params.mat(p.W), params.vec(p.b), layer_norm_of<T>(params, p.W, d.w_norm, 0, S * B, nullptr),
                       gates);
  // recurrent dropout: a mask for each transition k, drawn from mask_seed(rnn_seed, k)
  d.dropout.draw(rnn_dropout, mask_seed(rnn_seed, 1), B, S * B, n);
  // transitions 2..N have no input product: g = b_k at every position
  d.deep.resize(N - 1);
  for (Index k = 2; k <= N; ++k) {
    TransitionBuffers<T>& t = d.deep[k - 2];
    t.size(S * B, n, c.layer_norm);
    t.dropout.draw(rnn_dropout, mask_seed(rnn_seed, static_cast<uint64_t>(k)), B, S * B, n);
    t.gates.topRows(S * B).rowwise() = params.vec(p.transition(k).b);
  }
  auto states = rows_of(d.states, (S + 1) * B, n);
  auto r_h = rows_of(d.r_h, S * B, n);
  auto scratch = rows_of(scratch_buffer, B, 3 * n);
  auto first = step_rows(states, p.reverse ? S : 0, B);
  if (h0)
    first = *h0;
  else
    first.setZero();
  for (Index i = 0; i < S; ++i) {
    const Index j = p.reverse ? S - 1 - i : i;
    gru_step_forward<T>(step_rows(states, prev_block(p, j), B), params.mat(p.U), &moving[j * B],
                        {step_rows(gates, j, B), step_rows(r_h, j, B),
                         layer_norm_of<T>(params, p.U, d.u_norm, j * B, B, nullptr), d.dropout.step(j * B, B)},
                        scratch, transition_output(d, p, 1, j, B));
    for (Index k = 2; k <= N; ++k) {
      TransitionBuffers<T>& t = d.deep[k - 2];
      const Param U = p.transition(k).U;
      gru_step_forward<T>(step_rows(t.input, j, B), params.mat(U), &moving[j * B],
                          {step_rows(t.gates, j, B), step_rows(t.r_h, j, B),
                           layer_norm_of<T>(params, U, t.u_norm, j * B, B, nullptr), t.dropout.step(j * B, B)},
                          scratch, transition_output(d, p, k, j, B));
    }
  }
  if (p.residual) rows_of(d.skip_output, S * B, n) = state_rows(states, p.reverse, S, B) + X;
}

template <class T>
MatCRef<T> gru_layer_output(const GruLayerParams& p, const GruLayer<T>& d, Index S, Index B) {
  if (p.residual) return d.skip_output.topRows(S * B);
  return state_rows(d.states, p.reverse, S, B);
}

template <class T>
void gru_layer_backward(const Parameters<T>& params, const GruLayerParams& p, const MatCRef<T>& X, const T* moving,
                        Index S, Index B, GruLayer<T>& d, Parameters<T>& grads, MatRef<T> dX, bool accumulate,
                        Mat<T>& scratch_buffer) {
  const ModelConfig& c = params.config();
  const Index n = c.hidden, N = p.depth;
  auto states = d.states.topRows((S + 1) * B);
  auto dstates = rows_of(d.dstates, (S + 1) * B, n);
  dstates.setZero();
  state_rows(dstates, p.reverse, S, B) = d.doutput.topRows(S * B);
  auto dg = d.gates.topRows(S * B);  // each step's gates, until the step's backward replaces them by dg
  auto scratch = rows_of(scratch_buffer, B, 3 * n);
  for (TransitionBuffers<T>& t : d.deep) rows_of(t.dinput, B, n);
  for (Index i = S - 1; i >= 0; --i) {  // the forward's visiting order, reversed
    const Index j = p.reverse ? S - 1 - i : i;
    const MatCRef<T> dh = step_rows(dstates, out_block(p, j), B);
    // transitions N..2: the gradient of tᴺ_j is the state's, that of tᵏ⁻¹_j comes from transition k only
    for (Index k = N; k >= 2; --k) {
      TransitionBuffers<T>& t = d.deep[k - 2];
      const Param U = p.transition(k).U;
      t.dinput.setZero();
      gru_step_backward<T>(k == N ? dh : MatCRef<T>(d.deep[k - 1].dinput.topRows(B)), step_rows(t.input, j, B),
                           params.mat(U), &moving[j * B], step_rows(t.gates, j, B), scratch, t.dinput.topRows(B),
                           layer_norm_of<T>(params, U, t.u_norm, j * B, B, &grads), t.dropout.step(j * B, B));
    }
    gru_step_backward<T>(N > 1 ? MatCRef<T>(d.deep[0].dinput.topRows(B)) : dh, step_rows(states, prev_block(p, j), B),
                         params.mat(p.U), &moving[j * B], step_rows(dg, j, B), scratch,
                         step_rows(dstates, prev_block(p, j), B),
                         layer_norm_of<T>(params, p.U, d.u_norm, j * B, B, &grads), d.dropout.step(j * B, B));
  }
  // Transitions 2..N: g = b_k, so db_k = Σ dg; dU_k from their inputs, as for U below
  for (Index k = 2; k <= N; ++k)
    transition_weight_grads<T>(d.deep[k - 2], S * B, c.layer_norm, grads.mat(p.transition(k).U),
                               grads.vec(p.transition(k).b));
  // Row j*B+b of h_prev_all is the state the step at position j started from (h̄ with
  // recurrent dropout); the recurrent products' gradient is dg, or the dP that replaced their x̂
  const MatCRef<T> h_prev_all = p.reverse ? states.bottomRows(S * B) : states.topRows(S * B);
  gru_accumulate_dU<T>(d.dropout.products_input(h_prev_all, S * B), d.r_h.topRows(S * B),
                       c.layer_norm ? d.u_norm.hat.topRows(S * B) : dg, grads.mat(p.U));
  // a = X W + b, or LN_W(X W) + b
  const MatCRef<T> dP = gru_input_backward<T>(X, dg, layer_norm_of<T>(params, p.W, d.w_norm, 0, S * B, &grads),
                                              grads.mat(p.W), grads.vec(p.b));
  if (accumulate)
    dX.noalias() += dP * params.mat(p.W).transpose();
  else
    dX.noalias() = dP * params.mat(p.W).transpose();
  // residual: the output is state + X, so X's gradient also has the output's
  if (p.residual) dX += d.doutput.topRows(S * B);
}

#define RNNSEARCH_INSTANTIATE_GRU_LAYER(T)                                                                     \
  template void gru_layer_forward<T>(const Parameters<T>&, const GruLayerParams&, const MatCRef<T>&, const T*, \
                                     Index, Index, const MatCRef<T>*, GruLayer<T>&, Mat<T>&, double, uint64_t); \
  template MatCRef<T> gru_layer_output<T>(const GruLayerParams&, const GruLayer<T>&, Index, Index);            \
  template void gru_layer_backward<T>(const Parameters<T>&, const GruLayerParams&, const MatCRef<T>&, const T*, \
                                      Index, Index, GruLayer<T>&, Parameters<T>&, MatRef<T>, bool, Mat<T>&);
RNNSEARCH_INSTANTIATE_GRU_LAYER(float)
RNNSEARCH_INSTANTIATE_GRU_LAYER(double)

}  // namespace rnnsearch
