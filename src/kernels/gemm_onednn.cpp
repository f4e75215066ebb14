// Single-precision matrix products served by oneDNN (libdnnl-dev) instead of OpenBLAS.
//
// With EIGEN_USE_BLAS, every float product Eigen evaluates (A * B, Aᵀ * B, A * Bᵀ) ends in
// the Fortran BLAS call sgemm_. This definition, linked into the program, takes the place of
// OpenBLAS's for rnnsearch's code; everything else (double precision, matrix-vector
// products) still comes from OpenBLAS. Why: oneDNN's kernels are JIT-generated for the CPU
// they run on (AVX2, AVX-512, ...), so they stay fast on processors a BLAS release predates;
// build/gemm_bench measures both on the CPU at hand (docs/benchmarks.md).
//
// Inside the training threads' OpenMP parallel region oneDNN runs single-threaded, each
// thread multiplying its own shard, as OpenBLAS's OpenMP build does. Under --precision bf16
// a training thread's products go to bf16 instead (model/bf16_products.h).
#include <oneapi/dnnl/dnnl.h>

#include <cstdio>
#include <cstdlib>

#include "rnnsearch/kernels/bf16.h"

namespace {

// BLAS transposition flags ('N', 'T', and 'C', which is 'T' for real matrices) as oneDNN's.
char transposition(char blas) { return blas == 'N' || blas == 'n' ? 'N' : 'T'; }

}  // namespace

// Column-major C (m×n) = alpha op(A) op(B) + beta C. oneDNN's sgemm is row-major, and the
// row-major view of a column-major matrix is its transpose: Cᵀ = op(B)ᵀ op(A)ᵀ, so the
// operands swap places and keep their leading dimensions.
extern "C" int sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                      const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
                      const float* beta, float* c, const int* ldc) {
  // a training thread's product in bf16 (model/bf16_products.h), if it takes it
  if (const rnnsearch::SgemmHook hook = rnnsearch::sgemm_hook();
      hook && hook(*transa, *transb, *m, *n, *k, *alpha, a, *lda, b, *ldb, *beta, c, *ldc))
    return 0;
  const dnnl_status_t status = dnnl_sgemm(transposition(*transb), transposition(*transa), *n, *m, *k, *alpha, b,
                                          *ldb, a, *lda, *beta, c, *ldc);
  if (status != dnnl_success) {
    // Only invalid arguments fail, which Eigen never passes: a bug, not a user error.
    std::fprintf(stderr, "rnnsearch: internal error: dnnl_sgemm failed with status %d\n", static_cast<int>(status));
    std::abort();
  }
  return 0;
}
