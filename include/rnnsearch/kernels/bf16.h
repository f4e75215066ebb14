#pragma once
// bf16 matrix products with fp32 accumulation, for --precision bf16: the output layer's
// vocabulary projection directly, every other training product through model/bf16_products.h
// (docs/design.md §5).
//
// bf16 keeps fp32's sign and 8-bit exponent and 7 of its 23 mantissa bits: the range of
// fp32, about 3 significant digits. CPUs with AVX512_BF16 (which ones: docs/design.md §5)
// multiply pairs of bf16 at twice the fp32 rate, summing in fp32; oneDNN's matmul has the kernels. Operands are rounded to bf16 (to nearest, ties to
// even) just before a product, results stay fp32, and everything else (the parameters,
// their updates, the softmax) stays fp32: mixed precision as PyTorch's autocast does it.
#include <cstdint>
#include <vector>

#include "rnnsearch/kernels/tensor.h"

namespace rnnsearch {

// Whether bf16 products run natively here: rnnsearch was built with oneDNN and the CPU has
// AVX512_BF16. (Without it oneDNN would emulate bf16, slower than fp32.)
bool bf16_supported();

// Training multiplies in bf16 through sgemm_, which Eigen calls for every float product in a
// build with OpenBLAS (EIGEN_USE_BLAS) and oneDNN (kernels/gemm_onednn.cpp defines it): sgemm_
// first offers each product to the calling thread's hook, which model/bf16_products.h sets
// while a Bf16Products lives on the thread. The hook is declared here, below the model, so
// that the kernels need not know the model. It returns true if it did the product.
using SgemmHook = bool (*)(char transa, char transb, int m, int n, int k, float alpha, const float* a, int lda,
                           const float* b, int ldb, float beta, float* c, int ldc);
void set_sgemm_hook(SgemmHook hook);  // for the calling thread; nullptr: none
SgemmHook sgemm_hook();               // the calling thread's

// Whether training can multiply in bf16 here: bf16_supported() in a build whose float
// products go through sgemm_ (OpenBLAS and oneDNN both; kernels/tensor.h's kGemmBackend).
bool bf16_training_supported();

// fp32 → bf16, rounded to nearest with ties to even; NaN stays NaN.
inline uint16_t float_to_bf16(float value) {
  uint32_t bits;
  __builtin_memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

inline float bf16_to_float(uint16_t value) {
  const uint32_t bits = static_cast<uint32_t>(value) << 16;
  float result;
  __builtin_memcpy(&result, &bits, sizeof result);
  return result;
}

// A row-major bf16 matrix. Like the workspaces, its buffer only grows.
struct Bf16Matrix {
  Index rows = 0, cols = 0;
  std::vector<uint16_t> values;

  void assign(const MatCRef<float>& m);
};

// C = op(A) op(B), or C += op(A) op(B) when accumulate, with op(X) = Xᵀ when transposed
// (C is M×N, op(A) M×K, op(B) K×N). Single-threaded inside an OpenMP parallel region, like
// the fp32 products. Only when bf16_supported().
void gemm_bf16(const Bf16Matrix& A, bool transpose_a, const Bf16Matrix& B, bool transpose_b, MatRef<float> C,
               bool accumulate);

// C = A op(B) with oneDNN's kernel chosen for kBf16BlockRows rows whatever A's: A's rows are
// multiplied that many at a time, the last block padded with zero rows, so that a row's bits
// do not depend on how many rows it comes with (model/products.h: decoding's numerics).
constexpr Index kBf16BlockRows = 16;
void gemm_bf16_fixed_blocks(const Bf16Matrix& A, const Bf16Matrix& B, bool transpose_b, MatRef<float> C);

// The same on raw row-major storage: A is M×K (K×M when transposed) with row stride lda, B
// K×N (N×K) with row stride ldb, C M×N with row stride ldc.
void gemm_bf16(Index M, Index N, Index K, const uint16_t* A, Index lda, bool transpose_a, const uint16_t* B,
               Index ldb, bool transpose_b, float* C, Index ldc, bool accumulate);

}  // namespace rnnsearch
