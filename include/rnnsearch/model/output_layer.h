#pragma once
// The output layer of docs/design.md §1 on N rows X = [s, E, c] (N × (n+e+2n)), assembled by
// the caller (s is s_{i-1} for maxout, s_i for linear):
//
//   maxout: t̃ = X out_W + out_b (N×2l),  t[k] = max(t̃[2k], t̃[2k+1]),
//           logits = t out_Wo + out_bo   (tied embeddings: t tgt_embᵀ + out_bo)
//   linear: logits = X out_W + out_b
//
// and the training cost Σ −log softmax(logits)[y].
#include <vector>

#include "rnnsearch/kernels/bf16.h"
#include "rnnsearch/kernels/int8.h"
#include "rnnsearch/kernels/precision.h"
#include "rnnsearch/model/parameters.h"

namespace rnnsearch {

// The parameter the vocabulary projection multiplies by: out_Wo (maxout), tgt_emb (tied
// embeddings, read as its transpose) or out_W (linear output).
Param projection_weight(const ModelConfig& cfg);

// The last projection's weights in bf16, for --precision bf16: out_Wo (l×V), out_W for the
// linear output, or with tied embeddings tgt_emb (V×l, the transpose of the projection).
// Whoever owns the workspaces converts them once per set of weights (an update, a loaded
// model) and points the caches at them.
struct Bf16Projection {
  Bf16Matrix W;
  bool transposed = false;  // W holds the projection's transpose (tied embeddings)
};

void convert_projection(const Parameters<float>& params, Bf16Projection& projection);

// The last projection in int8, for translate --precision int8: one row per target word (the
// projection's columns: tgt_emb's rows when tied), each with its own scale.
struct Int8Projection {
  Int8Matrix W;  // V×l (V×(n+e+2n) for the linear output)
};

void convert_projection(const Parameters<float>& params, Int8Projection& projection);

// A decoder's choice of low-precision projection: at most one is set.
struct LowPrecisionProjection {
  const Bf16Projection* bf16 = nullptr;
  const Int8Projection* int8 = nullptr;
};

template <class T>
struct OutputCache {
  Mat<T> pre_maxout;  // N×2l  t̃
  Mat<T> maxout;      // N×l   t
  Mat<T> logits;      // kOutputChunkRows × V (output_layer_cost)
  Mat<T> padded_input;  // the last chunk of output_layer_cost, padded (and then its gradient)
  // When set (float only), logits = t W (X W for the linear output) and its backward are
  // bf16 products: the weights from here, the projection's input converted into input_bf16
  // by output_forward (output_backward reads it there) and dlogits into dlogits_bf16.
  const Bf16Projection* bf16 = nullptr;
  Bf16Matrix input_bf16, dlogits_bf16;
  // When set (float only, decoding: output_backward refuses it), logits = t W is an int8
  // product: the weights from here, the projection's input quantized into input_int8.
  const Int8Projection* int8 = nullptr;
  Int8Matrix input_int8;
  Int8Workspace int8_work;
};

// output_layer_cost works on this many rows at a time: the logits of a whole batch
// (N × V, N up to thousands of target tokens) would be the largest buffer of training.
// 192 rather than 256: less memory at the peak of small training on 2 threads, at the same
// speed (docs/benchmarks.md, Memory).
constexpr Index kOutputChunkRows = 192;
// and on a multiple of this many: a last chunk of fewer rows runs padded with zero rows.
// Each new product shape costs oneDNN (bf16) a JIT-compiled kernel, and the number of target
// tokens, hence the last chunk's rows, differs from batch to batch.
constexpr Index kOutputRowMultiple = 32;

// The last projection of the output layer restricted to some target tokens (a decoding
// shortlist, decode/shortlist.h): column k of W and b is that of token words[k] in
// out_Wo / out_bo (tied: tgt_embᵀ), or in out_W / out_b for the linear output.
template <class T>
struct OutputShortlist {
  std::vector<int> words;  // V' target ids
  Mat<T> W;                // l×V' (maxout) or (n+e+2n)×V' (linear)
  RowVec<T> b;             // 1×V'
};

// Gathers the columns of `words` (copies V'·l weights: once per batch, not per step).
template <class T>
void select_output_words(const Parameters<T>& params, std::vector<int> words, OutputShortlist<T>& shortlist);

// Writes logits (N×V; with a shortlist N×V', column k for token words[k]). The cache is
// filled for maxout models.
template <class T>
void output_forward(const Parameters<T>& params, const MatCRef<T>& X, OutputCache<T>& cache,
                    MatRef<T> logits, const OutputShortlist<T>* shortlist = nullptr);

// Replaces each row of logits by its log-softmax.
template <class T>
void log_softmax_rows(MatRef<T> logits);

// logits (N×V) in, probabilities out; returns the cross-entropy against the targets
// smoothed by ε (label_smoothing), q_i = (1−ε) onehot(targets[i]) + ε/V:
//
//   Σ_i −Σ_k q_ik log p_ik = Σ_i (1−ε)(−log p_i[y_i]) + ε (log Σ_k exp z_ik − mean_k z_ik)
//
// (ε = 0: Σ_i −log p_i[y_i]). With token_nll, also writes each row's unsmoothed
// −log p_i[y_i] there (exact even where p underflows).
template <class T>
T softmax_cross_entropy(MatRef<T> logits, const int* targets, T label_smoothing, T* token_nll = nullptr);

// probabilities in, dlogits = scale (p − q) out, in place (q as above).
template <class T>
void softmax_cross_entropy_backward(MatRef<T> probabilities, const int* targets, T label_smoothing,
                                    T scale);

// softmax_cross_entropy of output(X) over the N rows of X, kOutputChunkRows at a time,
// with each row's −log p in token_nll (when given). With grads, also the backward of
// scale × that sum, chunk by chunk right after its forward: d out_* are accumulated into
// grads and dX (N × (n+e+2n)) is written. dX may be X's own storage (training's is): each
// chunk of X is read in full before its rows of dX are written.
template <class T>
T output_layer_cost(const Parameters<T>& params, const MatCRef<T>& X, const int* targets,
                    T label_smoothing, OutputCache<T>& cache, T* token_nll, T scale = T(0),
                    Parameters<T>* grads = nullptr, Mat<T>* dX = nullptr);

// Accumulates d out_* into grads and writes dX (N × (n+e+2n)), which may be X's storage: X
// is read in full first.
template <class T>
void output_backward(const Parameters<T>& params, const MatCRef<T>& X, OutputCache<T>& cache,
                     const MatCRef<T>& dlogits, Parameters<T>& grads, MatRef<T> dX);

}  // namespace rnnsearch
