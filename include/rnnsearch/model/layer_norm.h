#pragma once
// Layer normalization of the 3n-wide products that feed a GRU's gates (--layer-normalization,
// docs/design.md §1.2; Ba et al. 2016 as Nematus applies it). Each row's [r | z] block (2n
// columns) and h̃ block (n) are normalised separately:
//
//   LN(P) = γ ∘ x̂ + β      x̂ = (P − mean) s      s = 1 / sqrt(var + 1e-5)   (per row and block)
//
// The forward is fused with what reads LN(P): the gates σ(LN(P) + g) and tanh(LN(P) + g), or
// the pre-activations LN(P) + b and g_E + LN_C(c dec_C). It works one row at a time, while
// the row is in the L1 cache: the mean, the variance, then x̂ (kept for the backward, with s)
// and the gate from it; LN(P) itself is never stored. The backward needs x̂ and s, and writes
// dP over x̂, also row by row (with dγ and dβ):
//
//   dP = s (γ∘dy − mean(γ∘dy) − x̂ mean(γ∘dy ∘ x̂))      dγ += Σ_rows dy ∘ x̂      dβ += Σ_rows dy
#include <optional>

#include "rnnsearch/kernels/tensor.h"
#include "rnnsearch/model/parameters.h"

namespace rnnsearch {

constexpr double kLayerNormEpsilon = 1e-5;

// One normalised product of R rows: its parameters, their gradients (the backward only) and
// what its backward needs.
template <class T>
struct NormedProduct {
  const T* gain;      // γ  3n
  const T* bias;      // β  3n
  T* dgain;           // dγ 3n (backward; may be null in the forward)
  T* dbias;           // dβ 3n
  MatRef<T> hat;      // R×3n  x̂, which the backward replaces by dP
  MatRef<T> inv_std;  // R×2   s of the [r | z] block (column 0) and the h̃ block (column 1)
};

// What reads a normalised block: σ (the r and z gates), tanh (h̃) or nothing (a pre-activation
// g = LN_W(X W) + b, or g_E + LN_C(c dec_C)).
enum class Activation { none, sigmoid, tanh };

// R rows of width coefficients, row r at data + r * stride: {m.data(), m.outerStride()} for
// a matrix, {b.data(), 0} for one row vector given to every row (a bias).
template <class T>
struct AddedRows {
  const T* data;
  Index stride;
};

// Columns [begin, begin + width) of the product are one block (block 0 = [r | z], 1 = h̃):
// P (R×width, those columns): the product; add: R rows of width, what the gate adds to LN(P);
// writes out = f(LN(P) + add) (R×width) and the block's x̂ and s. out may share P's or add's
// storage: each coefficient is read before it is written.
template <class T>
void layer_norm_forward(const MatCRef<T>& P, AddedRows<T> add, Activation f, MatRef<T> out, NormedProduct<T> norm,
                        Index begin, Index width, int block);

// Both blocks of a whole 3n-wide product: out = LN(P) + add.
template <class T>
void layer_norm_forward(const MatCRef<T>& P, AddedRows<T> add, MatRef<T> out, NormedProduct<T> norm);

// dy: R×width, the gradient of the block's LN(P). Replaces the block's x̂ by dP and adds
// the block's dγ and dβ.
template <class T>
void layer_norm_backward(const MatCRef<T>& dy, NormedProduct<T> norm, Index begin, Index width, int block);

// Both blocks; dy: R×3n.
template <class T>
void layer_norm_backward(const MatCRef<T>& dy, NormedProduct<T> norm);

// The normalisation of product (enc_fw_W, …, dec_U, enc_fw_cell2_U, …) over the rows of hat (R×3n)
// and inv_std (R×2); grads: where dγ and dβ go, or null in a forward.
template <class T>
NormedProduct<T> normed_product(const Parameters<T>& params, Param product, Parameters<T>* grads, MatRef<T> hat,
                                MatRef<T> inv_std) {
  const NormParams p = params.norm(product);
  return {params.data(p.gain), params.data(p.bias), grads ? grads->data(p.gain) : nullptr,
          grads ? grads->data(p.bias) : nullptr, hat, inv_std};
}

// Where one product's normalisation keeps x̂ (rows × 3n) and s (rows × 2) for a batch: a
// workspace's buffers, grown to the largest batch seen (rows_of).
template <class T>
struct NormBuffers {
  Mat<T> hat, inv_std;
  void size(Index rows, Index width) {
    rows_of(hat, rows, width);
    rows_of(inv_std, rows, 2);
  }
};

// normed_product over rows [first, first + rows) of buffers (which the caller has sized) when
// the model has layer normalization; none without.
template <class T>
std::optional<NormedProduct<T>> layer_norm_of(const Parameters<T>& params, Param product, NormBuffers<T>& buffers,
                                              Index first, Index rows, Parameters<T>* grads) {
  if (!params.config().layer_norm) return std::nullopt;
  return normed_product<T>(params, product, grads, buffers.hat.middleRows(first, rows),
                           buffers.inv_std.middleRows(first, rows));
}

}  // namespace rnnsearch
