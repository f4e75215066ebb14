#include "rnnsearch/model/output_layer.h"

#include "rnnsearch/model/products.h"

#include <cmath>
#include <optional>
#include <stdexcept>
#include <type_traits>

namespace rnnsearch {

Param projection_weight(const ModelConfig& cfg) {
  if (cfg.output == OutputKind::linear) return out_W;
  return cfg.tied_embeddings ? tgt_emb : out_Wo;
}

template <class T>
void select_output_words(const Parameters<T>& params, std::vector<int> words, OutputShortlist<T>& shortlist) {
  const ModelConfig& cfg = params.config();
  const bool linear = cfg.output == OutputKind::linear;
  const Index K = static_cast<Index>(words.size());
  shortlist.W.resize(linear ? cfg.output_input() : cfg.maxout, K);
  shortlist.b.resize(K);
  const auto bias = params.vec(linear ? out_b : out_bo);
  for (Index k = 0; k < K; ++k) {
    const int w = words[static_cast<size_t>(k)];
    if (linear)
      shortlist.W.col(k) = params.mat(out_W).col(w);
    else if (cfg.tied_embeddings)
      shortlist.W.col(k) = params.mat(tgt_emb).row(w).transpose();
    else
      shortlist.W.col(k) = params.mat(out_Wo).col(w);
    shortlist.b(k) = bias(w);
  }
  shortlist.words = std::move(words);
}

namespace {

// out = in W + b
template <class T, class Weights, class Bias>
void affine(const MatCRef<T>& in, const Weights& W, const Bias& b, MatRef<T> out) {
  multiply(out, in, W);
  out.rowwise() += b;
}

// The last projection, logits = P W + b: P is t (maxout) or X (linear output); W is out_Wo,
// tgt_embᵀ (tied) or out_W (linear); b is out_bo or out_b.
Param projection_bias(const ModelConfig& cfg) { return cfg.output == OutputKind::linear ? out_b : out_bo; }
// The parameter holds Wᵀ (V×l)
bool projection_transposed(const ModelConfig& cfg) {
  return cfg.output != OutputKind::linear && cfg.tied_embeddings;
}

// logits = P W + b
template <class T>
void projection_forward(const Parameters<T>& params, const MatCRef<T>& P, OutputCache<T>& cache, MatRef<T> logits) {
  const ModelConfig& cfg = params.config();
  const auto b = params.vec(projection_bias(cfg));
  if constexpr (std::is_same_v<T, float>) {
    if (cache.bf16) {
      cache.input_bf16.assign(P);
      if (invariant_products())
        gemm_bf16_fixed_blocks(cache.input_bf16, cache.bf16->W, cache.bf16->transposed, logits);
      else
        gemm_bf16(cache.input_bf16, false, cache.bf16->W, cache.bf16->transposed, logits, false);
      logits.rowwise() += b;
      return;
    }
    if (cache.int8) {
      cache.input_int8.assign(P);
      gemm_int8(cache.input_int8, cache.int8->W, logits, cache.int8_work);
      logits.rowwise() += b;
      return;
    }
  }
  const auto W = params.mat(projection_weight(cfg));
  if (projection_transposed(cfg))
    affine<T>(P, W.transpose(), b, logits);
  else
    affine<T>(P, W, b, logits);
}

// d W += Pᵀ dlogits (tied: d tgt_emb += dlogitsᵀ P), d b += Σ_rows dlogits, dP = dlogits Wᵀ.
// dP may be P's storage: it is written last. In bf16, P is read from the forward's copy.
template <class T>
void projection_backward(const Parameters<T>& params, const MatCRef<T>& P, const MatCRef<T>& dlogits,
                         OutputCache<T>& cache, Parameters<T>& grads, MatRef<T> dP) {
  const ModelConfig& cfg = params.config();
  const bool transposed = projection_transposed(cfg);
  const Param weight = projection_weight(cfg);
  if (cache.int8) throw std::logic_error("output_backward: the int8 projection is for decoding only");
  grads.vec(projection_bias(cfg)) += dlogits.colwise().sum();
  if constexpr (std::is_same_v<T, float>) {
    if (cache.bf16) {
      cache.dlogits_bf16.assign(dlogits);
      if (transposed)
        gemm_bf16(cache.dlogits_bf16, true, cache.input_bf16, false, grads.mat(weight), true);
      else
        gemm_bf16(cache.input_bf16, true, cache.dlogits_bf16, false, grads.mat(weight), true);
      gemm_bf16(cache.dlogits_bf16, false, cache.bf16->W, !transposed, dP, false);
      return;
    }
  }
  const auto W = params.mat(weight);
  if (transposed) {
    grads.mat(weight).noalias() += dlogits.transpose() * P;
    dP.noalias() = dlogits * W;
  } else {
    grads.mat(weight).noalias() += P.transpose() * dlogits;
    dP.noalias() = dlogits * W.transpose();
  }
}

}  // namespace

void convert_projection(const Parameters<float>& params, Bf16Projection& projection) {
  const ModelConfig& cfg = params.config();
  projection.transposed = projection_transposed(cfg);
  projection.W.assign(params.mat(projection_weight(cfg)));
}

void convert_projection(const Parameters<float>& params, Int8Projection& projection) {
  const ModelConfig& cfg = params.config();
  const auto W = params.mat(projection_weight(cfg));
  // gemm_int8 takes the words as rows: tgt_emb already is, out_Wo and out_W are transposed
  if (projection_transposed(cfg))
    projection.W.assign(W, int8_weight_levels());
  else
    projection.W.assign(Mat<float>(W.transpose()), int8_weight_levels());
}

template <class T>
void output_forward(const Parameters<T>& params, const MatCRef<T>& X, OutputCache<T>& cache,
                    MatRef<T> logits, const OutputShortlist<T>* shortlist) {
  const Index N = X.rows();
  if (params.config().output == OutputKind::linear) {
    // logits = X out_W + out_b
    if (shortlist)
      affine<T>(X, shortlist->W, shortlist->b, logits);
    else
      projection_forward<T>(params, X, cache, logits);
    return;
  }
  const Index l = params.config().maxout;
  // t̃ = X out_W + out_b
  auto pre = rows_of(cache.pre_maxout, N, 2 * l);
  affine<T>(X, params.mat(out_W), params.vec(out_b), pre);
  // t[k] = max(t̃[2k], t̃[2k+1]): the even and odd columns of t̃
  auto t = rows_of(cache.maxout, N, l);
  for (Index i = 0; i < N; ++i) {
    const T* p = pre.row(i).data();
    for (Index k = 0; k < l; ++k) t(i, k) = std::max(p[2 * k], p[2 * k + 1]);
  }
  // logits = t out_Wo + out_bo, or with tied embeddings t tgt_embᵀ + out_bo
  if (shortlist)
    affine<T>(t, shortlist->W, shortlist->b, logits);
  else
    projection_forward<T>(params, t, cache, logits);
}

template <class T>
void log_softmax_rows(MatRef<T> logits) {
  for (Index i = 0; i < logits.rows(); ++i) {
    on_aligned_row<T>(logits.row(i), [](auto row) {
      const T max = row.maxCoeff();
      const T log_sum = max + std::log((row.array() - max).exp().sum());
      row.array() -= log_sum;
    });
  }
}

template <class T>
T softmax_cross_entropy(MatRef<T> logits, const int* targets, T label_smoothing, T* token_nll) {
  T total = 0;
  for (Index i = 0; i < logits.rows(); ++i) {
    auto row = logits.row(i);
    const T max = row.maxCoeff();
    const T target_logit = row(targets[i]) - max;
    // mean_k (logit_k − max), read before the row turns into probabilities
    const T mean_logit = label_smoothing != T(0) ? row.mean() - max : T(0);
    row = (row.array() - max).exp().matrix();
    const T sum = row.sum();
    // −log p[y] = log Σ_k exp(logit_k − max) − (logit_y − max)
    const T log_sum = std::log(sum);
    const T nll = log_sum - target_logit;
    if (token_nll) token_nll[i] = nll;
    total += label_smoothing != T(0) ? (1 - label_smoothing) * nll + label_smoothing * (log_sum - mean_logit) : nll;
    row /= sum;
  }
  return total;
}

template <class T>
void softmax_cross_entropy_backward(MatRef<T> probabilities, const int* targets, T label_smoothing,
                                    T scale) {
  const T uniform = label_smoothing / static_cast<T>(probabilities.cols());
  for (Index i = 0; i < probabilities.rows(); ++i) {
    // p − q, q = (1−ε) onehot(y) + ε/V
    if (label_smoothing != T(0)) probabilities.row(i).array() -= uniform;
    probabilities(i, targets[i]) -= T(1) - label_smoothing;
    probabilities.row(i) *= scale;
  }
}

template <class T>
void output_backward(const Parameters<T>& params, const MatCRef<T>& X, OutputCache<T>& cache,
                     const MatCRef<T>& dlogits, Parameters<T>& grads, MatRef<T> dX) {
  const Index N = X.rows();
  if (params.config().output == OutputKind::linear) {
    // logits = X out_W + out_b
    projection_backward<T>(params, X, dlogits, cache, grads, dX);
    return;
  }
  const Index l = params.config().maxout;
  auto pre = cache.pre_maxout.topRows(N);
  auto t = cache.maxout.topRows(N);
  // logits = t out_Wo + out_bo (tied: t tgt_embᵀ + out_bo, whose gradient adds to the embeddings')
  auto dt = t;  // t is not needed any more once its weight gradient is taken: its storage takes dt
  projection_backward<T>(params, t, dlogits, cache, grads, dt);
  // maxout: the gradient goes to the larger of each pair (the first on a tie, as forward)
  auto dpre = pre;  // likewise t̃ becomes dt̃, written pair by pair after reading it
  for (Index i = 0; i < N; ++i) {
    T* p = dpre.row(i).data();
    for (Index k = 0; k < l; ++k) {
      const bool first = p[2 * k] >= p[2 * k + 1];
      p[2 * k] = first ? dt(i, k) : T(0);
      p[2 * k + 1] = first ? T(0) : dt(i, k);
    }
  }
  // t̃ = X out_W + out_b
  grads.mat(out_W).noalias() += X.transpose() * dpre;
  grads.vec(out_b) += dpre.colwise().sum();
  dX.noalias() = dpre * params.mat(out_W).transpose();
}

namespace {

// The cost of rows real rows of X, which may be followed by padding rows (zeros): their logits
// are computed and ignored, and get no gradient. dX has X's rows and may be X's storage.
template <class T>
T output_chunk_cost(const Parameters<T>& params, const MatCRef<T>& X, Index rows, const int* targets,
                    T label_smoothing, OutputCache<T>& cache, T* token_nll, T scale, Parameters<T>* grads,
                    MatRef<T>* dX) {
  auto logits = rows_of(cache.logits, X.rows(), params.config().tgt_vocab);
  output_forward<T>(params, X, cache, logits);
  const T cost = softmax_cross_entropy<T>(logits.topRows(rows), targets, label_smoothing, token_nll);
  if (!grads) return cost;
  softmax_cross_entropy_backward<T>(logits.topRows(rows), targets, label_smoothing, scale);
  logits.bottomRows(X.rows() - rows).setZero();
  output_backward<T>(params, X, cache, logits, *grads, *dX);
  return cost;
}

}  // namespace

template <class T>
T output_layer_cost(const Parameters<T>& params, const MatCRef<T>& X, const int* targets,
                    T label_smoothing, OutputCache<T>& cache, T* token_nll, T scale, Parameters<T>* grads,
                    Mat<T>* dX) {
  const Index N = X.rows();
  T total = 0;
  for (Index start = 0; start < N; start += kOutputChunkRows) {
    const Index rows = std::min(kOutputChunkRows, N - start);
    // A last chunk of fewer rows than a multiple of kOutputRowMultiple runs padded with zero
    // rows in cache.padded_input, which then takes its dX too.
    const Index padded = (rows + kOutputRowMultiple - 1) / kOutputRowMultiple * kOutputRowMultiple;
    if (padded != rows) {
      auto X_padded = rows_of(cache.padded_input, padded, X.cols());
      X_padded.topRows(rows) = X.middleRows(start, rows);
      X_padded.bottomRows(padded - rows).setZero();
    }
    const MatCRef<T> input =
        padded == rows ? MatCRef<T>(X.middleRows(start, rows)) : MatCRef<T>(cache.padded_input.topRows(padded));
    std::optional<MatRef<T>> input_grad;
    if (grads)
      input_grad.emplace(padded == rows ? MatRef<T>(dX->middleRows(start, rows))
                                        : MatRef<T>(cache.padded_input.topRows(padded)));
    total += output_chunk_cost<T>(params, input, rows, targets + start, label_smoothing, cache,
                                  token_nll ? token_nll + start : nullptr, scale, grads,
                                  input_grad ? &*input_grad : nullptr);
    if (grads && padded != rows) dX->middleRows(start, rows) = cache.padded_input.topRows(rows);
  }
  return total;
}

#define RNNSEARCH_INSTANTIATE_OUTPUT(T)                                                              \
  template void select_output_words<T>(const Parameters<T>&, std::vector<int>, OutputShortlist<T>&); \
  template void output_forward<T>(const Parameters<T>&, const MatCRef<T>&, OutputCache<T>&, \
                                  MatRef<T>, const OutputShortlist<T>*);                    \
  template void log_softmax_rows<T>(MatRef<T>);                                             \
  template T softmax_cross_entropy<T>(MatRef<T>, const int*, T, T*);                           \
  template void softmax_cross_entropy_backward<T>(MatRef<T>, const int*, T, T);             \
  template T output_layer_cost<T>(const Parameters<T>&, const MatCRef<T>&, const int*, T,       \
                                  OutputCache<T>&, T*, T, Parameters<T>*, Mat<T>*);                      \
  template void output_backward<T>(const Parameters<T>&, const MatCRef<T>&, OutputCache<T>&, \
                                   const MatCRef<T>&, Parameters<T>&, MatRef<T>);
RNNSEARCH_INSTANTIATE_OUTPUT(float)
RNNSEARCH_INSTANTIATE_OUTPUT(double)

}  // namespace rnnsearch
