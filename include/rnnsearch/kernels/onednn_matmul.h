#pragma once
// oneDNN's matmul primitive for the low-precision products (kernels/bf16.h, kernels/int8.h): one
// primitive per shape, made once and cached.
#include "rnnsearch/kernels/tensor.h"

namespace rnnsearch {

// The operands' type, and the result's: bf16 operands with an fp32 C, or int8 operands with
// an int32 C (the sums exact).
enum class MatmulType { bf16, s8 };

// C = op(A) op(B), or C += op(A) op(B) when accumulate, with op(X) = Xᵀ when transposed, on
// row-major storage: A is M×K (K×M when transposed) with row stride lda, B K×N (N×K) with
// row stride ldb, C M×N with row stride ldc. Single-threaded inside an OpenMP parallel
// region, like the fp32 products. Only in a build with oneDNN (RNNSEARCH_HAVE_ONEDNN).
void onednn_matmul(MatmulType type, Index M, Index N, Index K, const void* A, Index lda, bool transpose_a,
                   const void* B, Index ldb, bool transpose_b, void* C, Index ldc, bool accumulate);

}  // namespace rnnsearch
