#pragma once
// RNNsearch training computation (docs/design.md §1) on one batch: the encoder, the decoder run
// with teacher forcing, the output layer on every non-padding target position, and the cost
//
//   cost = Σ_{b, i < len_b} −log p(y_i | y_<i, x)
//
// or, with label smoothing ε, the cross-entropy against (1−ε)·onehot(y_i) + ε/V:
//
//   cost = Σ (1−ε)·(−log p(y_i)) + ε·mean_k(−log p(k))
//
// plus, with guided alignment (a batch with links and a weight), the cost of the attention's
// distance from the links (guided_alignment.h) — of the alignment output's β instead when the
// model has one (alignment_output.h; the attention is then left unguided).
//
// rnnsearch_forward returns that sum (validation, scoring); rnnsearch_forward_backward also
// accumulates scale × its gradient into grads (training: scale = 1 / target tokens of the
// whole update, all its batches with --accumulate). Training always needs both; fused, the
// output layer runs forward and backward on a chunk of rows at a time instead of keeping
// N × V logits.
//
// Decoder step i = 0..T-1 (0-based; the equations' step i+1), time-major rows i*B + b:
//   E_i = tgt_emb[y_{i-1}] (y_{-1} = <s>)     q_i = s_i att_W     α_i, c_i = attention(q_i)
//   g_i = E_i dec_W + dec_b + c_i dec_C        s_{i+1} = GRU(g_i, s_i; dec_U)
// (with --layer-normalization each product normalised first, §1.2), or the conditional GRU
// of --dec-cell-base-depth (decoder_step.h, §1.4), and over it the layers 2..D of --dec-depth
// (gru_layer.h, §1.4), run over all positions once the conditional GRU's loop is done
#include <cstdint>
#include <functional>
#include <vector>

#include "rnnsearch/model/alignment_output.h"
#include "rnnsearch/model/dropout.h"
#include "rnnsearch/model/encoder.h"
#include "rnnsearch/model/guided_alignment.h"
#include "rnnsearch/model/output_layer.h"
#include "rnnsearch/text/batcher.h"

namespace rnnsearch {

// Regularisation of one training batch (docs/design.md §1); all off when validating,
// translating or scoring.
struct Regularization {
  double embedding_dropout = 0;    // on x_j (encoder input) and E_i where it enters dec_W
  double output_dropout = 0;       // on the output layer's input X = [s, E, c], one mask of its own
  double source_word_dropout = 0;  // whole source tokens: x_j = 0 (--dropout-src)
  double target_word_dropout = 0;  // whole previous target words: E_i = 0 in E dec_W and in X (--dropout-trg)
  double rnn_dropout = 0;          // every GRU transition's state in its recurrent products (--dropout-rnn)
  double label_smoothing = 0;      // ε
  uint64_t seed = 0;               // the masks are drawn from it: same seed, same masks
  double guided_alignment = 0;     // weight w of the guided-alignment cost, for batches with links
  GuidedAlignmentCost guided_alignment_cost = GuidedAlignmentCost::ce;
  // With an alignment output: its cost's gradient also reaches the decoder and the encoder
  // (--alignment-output-backprop); by default only the aln_* tensors learn from it.
  bool alignment_output_backprop = false;
};

template <class T>
struct ModelWorkspace {
  EncoderWorkspace<T> encoder;
  Index batch = 0, tgt_len = 0;     // B, T
  std::vector<int> inputs;          // T*B  y_{i-1}
  std::vector<T> moving;            // T*B  1 where i < len_b
  Mat<T> E;                         // T*B × e  target embeddings into dec_W (after dropout)
  Mat<T> E_mask;                    // T*B × e
  std::vector<T> word_keep;         // T*B  target word dropout's factor of each y_{i-1}
  Mat<T> gates;                     // T*B × 3n E dec_W + dec_b, which each step replaces by
                                    //          its GRU gates [r | z | h̃], the backward by dg
  Mat<T> states;                    // (T+1)*B × n  block i = s_i (s_0 from the encoder)
  Mat<T> queries;                   // T*B × n
  Mat<T> alpha;                     // T*B × S
  T guided_cost = 0;                // the guided-alignment part of the cost (0 without)
  Mat<T> dalpha;                    // T*B × S  its gradient (backward)
  AlignmentOutputWorkspace<T> aln;  // the alignment output, T*B rows (models with one)
  Mat<T> contexts;                  // T*B × 2n
  Mat<T> r_h;                       // T*B × n  r ∘ s_prev (r ∘ s̄_prev with recurrent dropout)
  RecurrentDropoutBuffers<T> dropout;  // recurrent dropout of dec_U's products: s̄_prev = s_prev ∘ m
  // layer normalization only: x̂ and s of E dec_W, of each step's c dec_C and of its
  // recurrent products, T*B rows; the backward replaces each x̂ by dP
  NormBuffers<T> W_norm, C_norm, U_norm;
  std::vector<TransitionBuffers<T>> cells;  // the conditional decoder's cells 2..B, T*B rows each
  std::vector<GruLayer<T>> layers;           // the stacked decoder's layers 2..D (--dec-depth), T*B rows
  Mat<T> gru_scratch, attention_scratch;
  // output layer on the N non-padding positions
  std::vector<int> out_rows;        // N: the time-major row i*B + b of each
  std::vector<int> targets;         // N
  std::vector<T> token_nll;         // N  −log p of each target token (what `score` reports)
  Mat<T> X;                         // N × (n+e+2n)  [s, E, c], E without the dec_W path's mask;
                                    //               the backward writes dX over it
  Mat<T> X_mask;                    // N × (n+e+2n)
  OutputCache<T> output;
  bool embedding_dropout = false, output_dropout = false;
  T label_smoothing = 0;
  // backward
  Mat<T> dstates, dE, dcontexts, dqueries, dannotations, dkeys;  // (dg takes the gates' rows, dX X's)
};

template <class T>
T rnnsearch_forward(const Parameters<T>& params, const Batch& batch, const Regularization& regularization,
                    ModelWorkspace<T>& ws);

// output_done, if given, is called once the output layer's tensors (out_W .. out_bo:
// output_layer_span) have their whole gradient in grads, before the decoder's and encoder's
// backward passes (ShardedModel: an MPI job starts exchanging them then).
template <class T>
T rnnsearch_forward_backward(const Parameters<T>& params, const Batch& batch, const Regularization& regularization,
                             T scale, ModelWorkspace<T>& ws, Parameters<T>& grads,
                             const std::function<void()>& output_done = nullptr);

// The alignment output β of the batch's pairs (a model with one: config.alignment_output > 0),
// T*B × S, row i*B + b the alignment of target token i of pair b. run_model: run the encoder
// and the decoder with teacher forcing first, without dropout and without the output layer;
// false: ws holds this batch's rnnsearch_forward already (what `score` runs).
template <class T>
MatCRef<T> rnnsearch_alignment_output(const Parameters<T>& params, const Batch& batch, ModelWorkspace<T>& ws,
                                      bool run_model = true);

}  // namespace rnnsearch
