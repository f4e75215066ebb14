#pragma once
// Mixed-precision training (--precision bf16): every single-precision matrix product of a
// training thread, not only the vocabulary projection's, in bf16 with fp32 accumulation.
//
// The model's code writes its products as Eigen expressions (x * W); with EIGEN_USE_BLAS each
// ends in sgemm_, which rnnsearch defines (src/kernels/gemm_onednn.cpp). While a Bf16Products
// lives on a thread, that thread's sgemm_ rounds both operands to bf16 and multiplies them
// with oneDNN's bf16 matmul, as PyTorch's autocast does around each product. An operand that
// is a parameter matrix is not rounded again at every product (the recurrent weights meet
// every time step): Bf16Weights holds all of them rounded once per update, and sgemm_ reads
// the copy at the same offset. Everything else (the element-wise steps, the softmax, the
// gradients' sums, the optimizer) stays fp32.
#include <cstdint>
#include <memory>
#include <vector>

#include "rnnsearch/model/parameters.h"

namespace rnnsearch {

// The parameters' matrices in bf16, at the same offsets as in the fp32 buffer. Embeddings
// are only looked up, never multiplied, and the vocabulary projection has its own copy
// (Bf16Projection, which the output layer keeps for its backward), so those are skipped.
class Bf16Weights {
 public:
  // Rounds the matrices of params; call again whenever the values change (each update).
  void assign(const Parameters<float>& params);
  // The bf16 copy of the rows×cols row-major block at p with row stride ld, if the block
  // lies inside one converted parameter; nullptr otherwise.
  const uint16_t* find(const float* p, Index rows, Index cols, Index ld) const;

 private:
  struct Range {
    size_t begin, end;  // offsets into the parameters' buffer
  };
  const float* base_ = nullptr;
  size_t size_ = 0;
  std::unique_ptr<uint16_t[]> values_;  // pages of skipped parameters are never touched
  std::vector<Range> converted_;
};

// While alive, products on this thread run in bf16 with weights' copies of the parameters.
// Only where bf16_supported(); not nestable.
class Bf16Products {
 public:
  explicit Bf16Products(const Bf16Weights& weights);
  ~Bf16Products();
  Bf16Products(const Bf16Products&) = delete;
  Bf16Products& operator=(const Bf16Products&) = delete;
};

// Operands that are not parameters are rounded into per-thread buffers, and oneDNN repacks
// them into another; a product over all of a batch's positions (S·B or T·B rows, 3,200 with
// 100-word sentences in batches of 64) would grow both to MBs per thread for the rest of the
// run. So sgemm_in_bf16 runs the side of a product that depends on the batch (the other
// operand's outer side when one operand is a parameter, as in x W or dy Wᵀ; the inner side
// when neither is, as in the weight gradient xᵀ dy) in slices of at most kProductSliceLength.
constexpr int kProductSliceLength = 512;

// The length of the next slice of such a side with `remaining` entries left:
// kProductSliceLength while that much is left, then the largest power of two that fits.
// Why powers of two: each product shape costs oneDNN a JIT-compiled kernel (about as long to
// make as the product takes), and with slices of any length every batch's sentence lengths
// made new shapes, dozens per update and thread (docs/benchmarks.md, Where training time goes). A side that is a multiple of a shard's 32
// sentences now takes at most five lengths (512, 256, 128, 64, 32), made once.
int product_slice_length(int remaining);

// For sgemm_: C = op(A) op(B) (+ C) in column-major BLAS terms (transa, m, n, k, lda, ...),
// in bf16 if a Bf16Products lives on this thread. Returns false, having done nothing, when
// none does or when alpha ≠ 1 or beta ∉ {0, 1} (Eigen passes 1 and 0 or 1).
bool sgemm_in_bf16(char transa, char transb, int m, int n, int k, float alpha, const float* a, int lda,
                   const float* b, int ldb, float beta, float* c, int ldc);

}  // namespace rnnsearch
