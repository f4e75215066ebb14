#pragma once
// One decoder step for inference, on R rows at once: the live hypotheses of one or several
// sentences (row r belongs to encoded sentence row_sentence[r]). docs/design.md §1:
//
//   E = tgt_emb[y_prev]                     q = s_prev att_W
//   α, c = attention(q, K, a)               g = E dec_W + dec_b + c dec_C
//   s = GRU(g, s_prev; dec_U)               log p = log_softmax(output([s_prev or s, E, c]))
//   (each product layer-normalised with --layer-normalization, §1.2)
//
// or, with the conditional GRU of --dec-cell-base-depth B ≥ 2 (§1.4):
//
//   s' = GRU(E dec_W + dec_b, s_prev; dec_U)          q = s' att_W,  α, c = attention(q)
//   t² = GRU(c dec_C + dec_cell2_b, s'; dec_cell2_U)  tᵏ = GRU(dec_cellk_b, tᵏ⁻¹; dec_cellk_U)
//   s = tᴮ                                             log p = log_softmax(output([s, E, c]))
//
// and with --dec-depth D (§1.4) over it layers l = 2..D, each a GRU layer (gru_layer.h) with
// its own state, reading the output o^{l−1} of the layer below (o¹ = s):
//
//   sˡ = GRU layer l(o^{l−1}, sˡ_prev)    oˡ = sˡ, or sˡ + o^{l−1} with --skip
//   log p = log_softmax(output([oᴰ, E, c]))
//
// The state a row carries is then [s¹ | … | sᴰ] (R × D·n, ModelConfig::state_width).
//
// The encoder output (annotations, keys, s_0) comes from encoder_forward, run once per batch.
#include <optional>

#include "rnnsearch/model/encoder.h"
#include "rnnsearch/model/gru.h"
#include "rnnsearch/model/gru_layer.h"
#include "rnnsearch/model/layer_norm.h"
#include "rnnsearch/model/output_layer.h"

namespace rnnsearch {

// Where decoder_recurrence writes, R rows each.
template <class T>
struct DecoderRecurrenceOutputs {
  MatRef<T> queries;  // R×n   q
  MatRef<T> alpha;    // R×S   α
  MatRef<T> context;  // R×2n  c
  GruStepCache<T> cache;  // for the GRU's backward; cache.gates: in g_E (R×3n), out the gates
  MatRef<T> state;    // R×n   s
  std::optional<NormedProduct<T>> context_norm;  // LN_C of c dec_C (none: no layer normalization)
  // The conditional decoder only: cells 2..B, which use rows [first, first + R) of each (cell
  // 2's input is s', the state the attention is queried with).
  std::vector<TransitionBuffers<T>>* cells = nullptr;
  Index first = 0;
};

// The recurrence of one decoder step, shared by training (all rows of a batch, step after
// step) and decoding (the live hypotheses):
//
//   q = s_prev att_W     α, c = attention(q)     g = g_E + c dec_C     s = GRU(g, s_prev; dec_U)
//
// or the conditional GRU (config.conditional_decoder(): s' = GRU(g_E, s_prev; dec_U),
// q = s' att_W, then the cells of out.cells, the second with input c dec_C + dec_cell2_b).
//
// g_E = E dec_W + dec_b is given in out.cache.gates (training computes it for all steps in
// one GEMM); g and then the GRU's gates are written over it. Rows with moving = 0 keep
// s = s_prev. gru_scratch: R×3n. With layer normalization g_E = LN_W(E dec_W) + dec_b,
// g = g_E + LN_C(c dec_C) (out.context_norm) and the GRU normalises its recurrent products
// (out.cache.norm), §1.2. With recurrent dropout (training) out.cache.dropout and each
// cell's TransitionBuffers::dropout hold the masks of dec_U's and the cells' products.
template <class T>
void decoder_recurrence(const Parameters<T>& params, const AttentionMemory<T>& memory, const int* row_sentence,
                        const T* moving, const MatCRef<T>& s_prev, Mat<T>& gru_scratch, Mat<T>& attention_scratch,
                        DecoderRecurrenceOutputs<T> out);

// Gradients of one step's recurrence, R rows each.
template <class T>
struct DecoderRecurrenceGradients {
  MatRef<T> context;  // R×2n  in: d c from its other uses (the output layer); out: + g's share
  MatRef<T> queries;  // R×n   out: d q
  MatRef<T> s_prev;   // R×n   += d s_prev (it may already hold s_prev's other uses)
  const MatCRef<T>* alpha = nullptr;  // R×S in: d α of a cost on the attention itself
                                      // (guided alignment), or none
};

// The backward of decoder_recurrence, given ds (R×n, the total gradient of s) and the
// forward's outputs; d g, which is also d g_E, replaces the gates in forward.cache.gates:
//
//   d g  = GRU backward of s            d c += d g dec_Cᵀ   (d P_C dec_Cᵀ, through LN_C)
//   d q  = attention backward of c      d s_prev += GRU's share + d q att_Wᵀ
//
// Accumulates d att_v and the gradients of the attention memory (dkeys, dannotations:
// Bs*S rows). The weight gradients of att_W, dec_C and dec_U are left to
// decoder_recurrence_weight_grads, one GEMM each over all steps. With layer normalization
// forward.cache.norm and forward.context_norm must carry dγ and dβ: the norms' gradients
// are added here, and each x̂ is replaced by its product's gradient dP.
template <class T>
void decoder_recurrence_backward(const Parameters<T>& params, const AttentionMemory<T>& memory,
                                 const int* row_sentence, const T* moving, const MatCRef<T>& s_prev,
                                 DecoderRecurrenceOutputs<T> forward, const MatCRef<T>& ds,
                                 DecoderRecurrenceGradients<T> grad, Mat<T>& dkeys, Mat<T>& dannotations,
                                 Parameters<T>& grads, Mat<T>& gru_scratch, Mat<T>& attention_scratch);

// d dec_U, d att_W and d dec_C of every step at once; rows are (step, row) pairs:
// s_prev_all (s̄_prev with recurrent dropout: what dec_U's products read), r_h_all,
// contexts_all and dqueries_all as the forward and backward of the steps left them,
// query_states_all the states the queries were made from (s_prev, or s' for the
// conditional decoder); dPU_all and dPC_all the gradients of the products s_prev
// dec_U (with r ∘ s_prev for h̃) and c dec_C: dg (of cell 2 for dec_C in the conditional
// decoder) without layer normalization, the cache.norm and context_norm hats (dP) with it.
// The conditional decoder's cells take their own: transition_weight_grads.
template <class T>
void decoder_recurrence_weight_grads(const MatCRef<T>& query_states_all, const MatCRef<T>& s_prev_all,
                                     const MatCRef<T>& r_h_all,
                                     const MatCRef<T>& contexts_all, const MatCRef<T>& dPU_all,
                                     const MatCRef<T>& dPC_all, const MatCRef<T>& dqueries_all, Parameters<T>& grads);

template <class T>
struct DecoderStepWorkspace {
  Mat<T> E, gates, queries, r_h, X, gru_scratch, attention_scratch;  // gates: g_E, g, then [r | z | h̃]
  NormBuffers<T> W_norm, C_norm, U_norm;  // layer normalization: x̂ and s of each product
  std::vector<TransitionBuffers<T>> cells;  // the conditional decoder's cells 2..B
  std::vector<GruLayer<T>> layers;          // --dec-depth: layers 2..D, one step of R rows each
  OutputCache<T> output;
  std::vector<T> moving;  // all ones: every row takes the step
  // results of the last step, R rows each
  Mat<T> states;          // R×state_width()  s, or [s¹ | … | sᴰ] with --dec-depth D
  Mat<T> alpha;           // R×S  attention weights
  Mat<T> log_probs;       // R×V, or R×V' over a shortlist's words
};

// The state a decoder starts from: s_0 (R × n, from the encoder) in every layer's block of
// states (R × state_width()).
template <class T>
void decoder_start_states(const ModelConfig& config, const MatCRef<T>& s0, MatRef<T> states) {
  const Index n = config.hidden;
  for (int layer = 0; layer < config.dec_depth; ++layer) states.middleCols(layer * n, n) = s0;
}

// memory: the encoded sentences (attention_memory(encoder) of a batch); s_prev: R ×
// state_width(). With a shortlist, log p is computed and normalised over its V' words only.
template <class T>
void decoder_step(const Parameters<T>& params, const AttentionMemory<T>& memory, const int* row_sentence,
                  const MatCRef<T>& s_prev, const int* y_prev, DecoderStepWorkspace<T>& ws,
                  const OutputShortlist<T>* shortlist = nullptr);

}  // namespace rnnsearch
