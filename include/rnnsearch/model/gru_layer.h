#pragma once
// One layer of a stack of GRUs over a sequence of S positions for B rows (docs/design.md
// §1.3, §1.4): each direction of each encoder layer, the stacked decoder's layers 2..D in
// training (all target positions), and in decoding (one step: S = 1, B = the live rows).
//
//   t¹_j = GRU(x_j W + b, h_{j-1}; U)        (LN_W(x_j W) + b with layer normalization)
//   tᵏ_j = GRU(b_k, tᵏ⁻¹_j; U_k)  k = 2..N   (deep transition; N = p.depth)
//   h_j  = tᴺ_j                               h_{-1} = h0 (0 in the encoder, s_0 in the decoder)
//   out_j = h_j, or h_j + x_j with p.residual (--skip)
//
// Every matrix is time-major, rows j*B + b, indexed by position j also when p.reverse (the
// layer then visits j = S-1 .. 0). Rows with moving = 0 keep their state. With recurrent
// dropout (--dropout-rnn) each transition's products read its state through a mask of its
// own (gru.h), drawn once for the sequence.
#include <vector>

#include "rnnsearch/model/gru.h"
#include "rnnsearch/model/layer_norm.h"
#include "rnnsearch/model/parameters.h"

namespace rnnsearch {

template <class T>
struct GruLayer {
  Mat<T> gates;        // S*B × 3n   x W + b for all positions in one GEMM, which each step
                       //            replaces by its [r | z | h̃], and the backward by dg
  Mat<T> states;       // (S+1)*B × n: forward: block 0 = h0, block j+1 = h_j;
                       //              reverse: block j = h_j, block S = h0
  Mat<T> r_h;          // S*B × n    r ∘ h_prev
  Mat<T> dstates;      // (S+1)*B × n (backward); h0's block then holds h0's gradient
  // layer normalization only: x̂ and s of x W and of each step's recurrent products, S*B
  // rows; the backward replaces each x̂ by its product's gradient dP
  NormBuffers<T> w_norm, u_norm;
  RecurrentDropoutBuffers<T> dropout;      // transition 1's recurrent dropout
  std::vector<TransitionBuffers<T>> deep;  // transitions 2..N, rows j*B + b
  Mat<T> skip_output;  // S*B × n  residual layers: the output, state + input
  Mat<T> doutput;      // S*B × n  (backward) the gradient of the layer's output
};

// Runs layer p over X (S*B × its input width); h0: B × n, or null for zeros. moving: S*B.
// scratch: B × 3n (grown if needed). rnn_dropout: the recurrent dropout rate (0: off);
// transition k's mask is drawn from mask_seed(rnn_seed, k).
template <class T>
void gru_layer_forward(const Parameters<T>& params, const GruLayerParams& p, const MatCRef<T>& X, const T* moving,
                       Index S, Index B, const MatCRef<T>* h0, GruLayer<T>& d, Mat<T>& scratch,
                       double rnn_dropout = 0, uint64_t rnn_seed = 0);

// The layer's output, S*B × n: its states, or with p.residual their sum with its input.
template <class T>
MatCRef<T> gru_layer_output(const GruLayerParams& p, const GruLayer<T>& d, Index S, Index B);

// From d.doutput (S*B × n, the gradient of the layer's output): every parameter gradient of
// the layer into grads, the gradient of X into dX (accumulate: added to it), and h0's into
// d.dstates' block of h0 (gru_layer_dh0).
template <class T>
void gru_layer_backward(const Parameters<T>& params, const GruLayerParams& p, const MatCRef<T>& X, const T* moving,
                        Index S, Index B, GruLayer<T>& d, Parameters<T>& grads, MatRef<T> dX, bool accumulate,
                        Mat<T>& scratch);

// After the backward: the gradient of h0, B × n.
template <class T>
MatCRef<T> gru_layer_dh0(const GruLayerParams& p, const GruLayer<T>& d, Index S, Index B) {
  return d.dstates.middleRows(p.reverse ? S * B : 0, B);
}

}  // namespace rnnsearch
