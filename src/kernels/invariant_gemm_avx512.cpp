// gemm_invariant's AVX-512 tile (kernels/invariant_gemm.h), compiled with -mavx512f.
#include <immintrin.h>

#include "invariant_gemm_tile.h"

namespace rnnsearch {

namespace {

struct Avx512 {
  using type = __m512;
  static constexpr int lanes = 16;
  static type zero() { return _mm512_setzero_ps(); }
  static type broadcast(float x) { return _mm512_set1_ps(x); }
  static type load(const float* p) { return _mm512_load_ps(p); }
  static type fma(type a, type b, type c) { return _mm512_fmadd_ps(a, b, c); }
  static void store(float* p, type x) { _mm512_store_ps(p, x); }
};

}  // namespace

void invariant_tile_avx512(int rows, std::ptrdiff_t K, const float* A, std::ptrdiff_t lda, const float* B, std::ptrdiff_t ldb,
                         float* tile) {
  tile_product<Avx512>(rows, K, A, lda, B, ldb, tile);
}

}  // namespace rnnsearch
