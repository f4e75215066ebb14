// gemm_invariant's AVX2 + FMA tile (kernels/invariant_gemm.h), compiled with -mavx2 -mfma.
#include <immintrin.h>

#include "invariant_gemm_tile.h"

namespace rnnsearch {

namespace {

struct Avx2 {
  using type = __m256;
  static constexpr int lanes = 8;
  static type zero() { return _mm256_setzero_ps(); }
  static type broadcast(float x) { return _mm256_set1_ps(x); }
  static type load(const float* p) { return _mm256_load_ps(p); }
  static type fma(type a, type b, type c) { return _mm256_fmadd_ps(a, b, c); }
  static void store(float* p, type x) { _mm256_store_ps(p, x); }
};

}  // namespace

void invariant_tile_avx2(int rows, std::ptrdiff_t K, const float* A, std::ptrdiff_t lda, const float* B, std::ptrdiff_t ldb,
                         float* tile) {
  tile_product<Avx2>(rows, K, A, lda, B, ldb, tile);
}

}  // namespace rnnsearch
