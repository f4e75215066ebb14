#pragma once
// The source side of RNNsearch (docs/design.md §1) for a batch of B sentences:
//
//   x_j  = src_emb[w_j]                                  (dropout on x, when training)
//          (and with --dropout-rnn, dropout on each GRU's state in its recurrent products)
//   h→_j = GRU_fw(x_j, h→_{j-1}),  h←_j = GRU_bw(x_j, h←_{j+1})   h→_0 = h←_{len+1} = 0
//          (input side x W + b, or LN_W(x W) + b with layer normalization, §1.2)
//          with --enc-cell-depth N, each GRU is N transitions per position (deep transition):
//            t¹_j = GRU(x_j W + b, h_{j-1}; U),  tᵏ_j = GRU(b_k, tᵏ⁻¹_j; U_k) k = 2..N,  h_j = tᴺ_j
//          with --enc-depth L, each direction is L such layers, layer l reading layer l−1's
//          output (its state, plus its input with --skip) instead of x
//   a_j  = [h→_j ; h←_j]   (the top layers' outputs)      annotations, 1×2n
//   s_0  = tanh(mean_{j<len} a_j init_W + init_b)         decoder start state
//   K_j  = a_j att_U + att_b                              attention keys
//
// Padding: position j of sentence b moves the GRUs only if j < len_b, so the backward GRU
// of each sentence starts at its own last token (</s>) with h = 0.
#include <cstdint>
#include <vector>

#include "rnnsearch/model/attention.h"
#include "rnnsearch/model/gru_layer.h"
#include "rnnsearch/model/parameters.h"

namespace rnnsearch {

template <class T>
struct EncoderWorkspace {
  Index batch = 0, max_len = 0;     // B, S
  std::vector<int> lengths;         // B
  std::vector<int> tokens;          // S*B time-major source ids
  std::vector<T> moving;            // S*B: 1 where j < len_b
  Mat<T> x;                         // S*B × e   embeddings after dropout
  Mat<T> dropout_mask;              // S*B × e   (rows used only with dropout or word dropout)
  std::vector<T> word_keep;         // S*B       word dropout's factor of each token
  bool dropout = false;
  std::vector<GruLayer<T>> fw, bw;  // layers 1..L of each direction (--enc-depth L, gru_layer.h)
  Mat<T> gru_scratch;               // B × 3n
  Mat<T> annotations;               // B*S × 2n  batch-major: row b*S + j
  Mat<T> keys;                      // B*S × n
  Mat<T> mean;                      // B × 2n
  Mat<T> s0;                        // B × n
  Mat<T> dx;                        // S*B × e   (backward)
  Mat<T> dmean_pre;                 // B × n     (backward)
};

// What the decoder attends to: the annotations and keys of the encoded batch.
template <class T>
AttentionMemory<T> attention_memory(const EncoderWorkspace<T>& ws) {
  return {&ws.annotations, &ws.keys, ws.max_len, ws.lengths.data()};
}

// src: S*B time-major ids, lengths: B. dropout_rate (on x's units), word_dropout_rate (on
// whole tokens of x) and rnn_dropout_rate (on the GRUs' states where they enter the
// recurrent products) 0 = off; the masks are drawn from dropout_seed (+3 for the words',
// +5 for the GRUs'), so the same seed reproduces them (the gradient checks rely on that).
template <class T>
void encoder_forward(const Parameters<T>& params, const int* src, const int* lengths, Index B, Index S,
                     double dropout_rate, double word_dropout_rate, double rnn_dropout_rate, uint64_t dropout_seed,
                     EncoderWorkspace<T>& ws);

// Given the gradients of the annotations (B*S × 2n, batch-major), the keys (B*S × n) and
// s_0 (B × n), accumulates every encoder-side parameter gradient into grads. dannotations
// is modified (it receives the keys' and the mean's contributions).
template <class T>
void encoder_backward(const Parameters<T>& params, EncoderWorkspace<T>& ws, Mat<T>& dannotations,
                      const Mat<T>& dkeys, const MatCRef<T>& ds0, Parameters<T>& grads);

}  // namespace rnnsearch
