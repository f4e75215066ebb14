#pragma once
// Batch-invariant fp32 matrix products, for decoding (docs/design.md, "Decoding numerics").
//
// A BLAS product's bits depend on more than its operands: the kernels (oneDNN's, OpenBLAS's,
// Eigen's) block K and pick micro-kernels by the shape of the whole product, so one row of a
// product of 64 rows is not bitwise the row the same input gives alone. gemm_invariant fixes
// each output element's arithmetic instead: c_ij = fma(a_i,K−1, b_K−1,j, … fma(a_i0, b_0j, 0)),
// one rounding per step, k in order, whatever M, N, the blocking and the vector width. Every
// CPU path (AVX-512, AVX2 + FMA, scalar) vectorises across j only, so all give the same bits.
#include "rnnsearch/kernels/tensor.h"

namespace rnnsearch {

// The code paths, the best the CPU has (util/cpu.h's cap applied) chosen by gemm_invariant.
enum class InvariantGemmPath { scalar, avx2, avx512 };
InvariantGemmPath invariant_gemm_path();
// Whether this CPU (with the cap) can run a path: every path is tested where it can.
bool invariant_gemm_path_supported(InvariantGemmPath path);

// C = A op(B), or C += A op(B) (C + the whole sum) when accumulate; row-major, A M×K with row
// stride lda, op(B) K×N: B itself (row stride ldb) or, when transpose_b, the transpose of the
// N×K matrix B. C is M×N with row stride ldc.
void gemm_invariant(Index M, Index N, Index K, const float* A, Index lda, const float* B, Index ldb,
                    bool transpose_b, float* C, Index ldc, bool accumulate);
// The same on a given path (which must be supported).
void gemm_invariant(InvariantGemmPath path, Index M, Index N, Index K, const float* A, Index lda, const float* B,
                    Index ldb, bool transpose_b, float* C, Index ldc, bool accumulate);

}  // namespace rnnsearch
