#pragma once
// One step of a GRU for a batch of B rows, the form of docs/design.md §1 shared by the encoder
// (input-side pre-activations a = x W + b) and the decoder (g = E dec_W + dec_b + c dec_C):
//
//   r  = σ(g_r + h_prev U_r)
//   z  = σ(g_z + h_prev U_z)
//   h̃  = tanh(g_h + (r ∘ h_prev) U_h)
//   h  = (1 - z) ∘ h_prev + z ∘ h̃            rows with moving = 0 keep h = h_prev
//
// The caller owns the input-side pre-activations and the recurrent weight gradient: the
// backward returns the gradient of the pre-activations dg = [dr_pre | dz_pre | dh̃_pre],
// which is at once the gradient of g and (with h_prev, r ∘ h_prev, and without layer
// normalization) all that dU needs, so dU is accumulated for a whole sequence in two large
// GEMMs (gru_accumulate_dU) instead of two small ones per step.
//
// One B×3n block per step goes through three lives: g (in), the gates (after the forward),
// dg (after the backward). g is spent once the gates exist and the gates once dg does, so a
// sequence keeps one S·B×3n buffer instead of three; each function takes a B×3n scratch.
//
// With layer normalization (§1.2) the recurrent products are normalised before they are
// added: r, z = σ(g_rz + LN_U(h_prev U_rz)), h̃ = tanh(g_h + LN_U((r ∘ h_prev) U_h)). The
// backward then writes the products' gradient dP over x̂ (cache.norm->hat), and dU needs dP
// where it needs dg without normalization.
//
// With recurrent dropout (--dropout-rnn, §1.2) the products read h̄ = h_prev ∘ m instead of
// h_prev, m one mask per row drawn for the whole sequence (the same at every step):
// r, z = σ(g_rz + h̄ U_rz), h̃ = tanh(g_h + (r ∘ h̄) U_h); the update h = (1-z) ∘ h_prev + z ∘ h̃
// keeps h_prev itself. dU then needs h̄ where it needs h_prev, and r_h holds r ∘ h̄.
#include <cstdint>
#include <optional>

#include "rnnsearch/kernels/tensor.h"
#include "rnnsearch/model/layer_norm.h"

namespace rnnsearch {

// One step's recurrent dropout: the mask m and where the forward writes h̄ = h_prev ∘ m.
template <class T>
struct RecurrentDropout {
  MatCRef<T> mask;    // B×n
  MatRef<T> dropped;  // B×n  h̄
};

// What the backward of one step needs, written by the forward. Shapes B×3n and B×n.
template <class T>
struct GruStepCache {
  MatRef<T> gates;   // [r | z | h̃]   B×3n  (in the forward: g, which the gates replace)
  MatRef<T> r_h;     // r ∘ h_prev    B×n   (r ∘ h̄ with recurrent dropout)
  std::optional<NormedProduct<T>> norm;  // LN_U of the recurrent products (none: no layer normalization)
  std::optional<RecurrentDropout<T>> dropout = std::nullopt;  // none: no recurrent dropout
};

// The masks of one GRU's recurrent dropout for a sequence: m (B×n, drawn once) and every
// step's h̄ (rows × n, rows j*B + b as the caller's other buffers).
template <class T>
struct RecurrentDropoutBuffers {
  Mat<T> mask;     // B × n
  Mat<T> dropped;  // rows × n
  bool on = false;
  // rate 0: off. Otherwise draws m from seed and sizes dropped.
  void draw(double rate, uint64_t seed, Index B, Index rows, Index n);
  // Rows [first, first + R) of dropped with the mask's first R rows, or none when off.
  std::optional<RecurrentDropout<T>> step(Index first, Index R) {
    if (!on) return std::nullopt;
    return RecurrentDropout<T>{mask.topRows(R), dropped.middleRows(first, R)};
  }
  // What the recurrent products read over the first `rows` rows: h̄, or h_prev itself.
  MatCRef<T> products_input(const MatCRef<T>& h_prev_all, Index rows) const {
    return on ? MatCRef<T>(dropped.topRows(rows)) : h_prev_all;
  }
};

// cache.gates: in g (B×3n), out the gates. h_prev: B×n, U: n×3n, moving: B (1 = this row
// takes a step, 0 = padding). Writes h (B×n) and cache.r_h; scratch: B×3n.
template <class T>
void gru_step_forward(const MatCRef<T>& h_prev, const MatCRef<T>& U, const T* moving, GruStepCache<T> cache,
                      MatRef<T> scratch, MatRef<T> h);

// dh: B×n, the total gradient of the loss with respect to h. gates_dg: in the forward's
// gates, out dg (B×3n, the pre-activation gradient). Adds the gradient of h_prev to dh_prev
// (B×n), which may already hold h_prev's gradient from other uses. scratch: B×3n. norm: the
// forward's cache.norm (with dgain and dbias set), or none; dropout: the forward's
// cache.dropout, or none.
template <class T>
void gru_step_backward(const MatCRef<T>& dh, const MatCRef<T>& h_prev, const MatCRef<T>& U, const T* moving,
                       MatRef<T> gates_dg, MatRef<T> scratch, MatRef<T> dh_prev,
                       const std::optional<NormedProduct<T>>& norm = std::nullopt,
                       const std::optional<RecurrentDropout<T>>& dropout = std::nullopt);

// The input side of a GRU for all rows of X at once (the encoder's x, the decoder's E):
//
//   g = X W + b,  or  LN_W(X W) + b  with layer normalization (norm: over the same rows)
//
// g: rows × 3n.
template <class T>
void gru_input_forward(const MatCRef<T>& X, const MatCRef<T>& W, const ConstRowVecMap<T>& b,
                       const std::optional<NormedProduct<T>>& norm, MatRef<T> g);

// Its backward from dg (the gradient of g): db += Σ_rows dg, dW += Xᵀ dP. Returns dP, the
// gradient of the product X W: dg itself, or LN_W's backward of it, written over norm's x̂
// (norm then needs dgain and dbias). The caller takes X's gradient, dP Wᵀ.
template <class T>
MatCRef<T> gru_input_backward(const MatCRef<T>& X, const MatCRef<T>& dg, const std::optional<NormedProduct<T>>& norm,
                              MatRef<T> dW, RowVecMap<T> db);

// A transition: a GRU step whose input side is its bias alone, g = b (deep transition in the
// encoder, the conditional decoder's cells after the first; docs/design.md §1.3, §1.4). Its
// buffers for all rows (steps × batch, rows t*B + b) of one sequence, or R rows of one step.
template <class T>
struct TransitionBuffers {
  Mat<T> input;    // rows × n    the state it reads (the previous transition's output)
  Mat<T> gates;    // rows × 3n   g, then [r | z | h̃], then dg (see GruStepCache)
  Mat<T> r_h;      // rows × n
  Mat<T> dinput;   // B × n       (backward) the gradient of one step's input
  NormBuffers<T> u_norm;  // layer normalization of its recurrent products
  RecurrentDropoutBuffers<T> dropout;  // recurrent dropout of its input (drawn by the caller)
  void size(Index rows, Index n, bool layer_norm) {
    rows_of(input, rows, n);
    rows_of(gates, rows, 3 * n);
    rows_of(r_h, rows, n);
    if (layer_norm) u_norm.size(rows, 3 * n);
  }
};

// dU and db of a transition over its first `rows` rows, after every step's backward:
// db += Σ dg, dU from its inputs (h̄ with recurrent dropout) as gru_accumulate_dU (dP = dg,
// or the dP over u_norm's x̂).
template <class T>
void transition_weight_grads(const TransitionBuffers<T>& t, Index rows, bool layer_norm, MatRef<T> dU,
                             RowVecMap<T> db);

// dU[:, 0:2n] += H_prev^T dP[:, 0:2n];  dU[:, 2n:3n] += (R∘H_prev)^T dP[:, 2n:3n]
// over all steps at once (rows = steps × batch); dP = dg without layer normalization, the
// backward's cache.norm->hat with it. With recurrent dropout H_prev is H̄ and r_h_all R∘H̄.
template <class T>
void gru_accumulate_dU(const MatCRef<T>& h_prev_all, const MatCRef<T>& r_h_all,
                       const MatCRef<T>& dP_all, MatRef<T> dU);

}  // namespace rnnsearch
