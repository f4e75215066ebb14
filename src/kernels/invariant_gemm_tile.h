#pragma once
// The tile of kernels/invariant_gemm.h, written once for any vector type: the AVX-512, AVX2
// and scalar paths each include it in their own file, compiled for that instruction set, and
// keep their instantiation to themselves (internal linkage: nothing here may be shared
// between files compiled for different CPUs).
#include <cstddef>

namespace rnnsearch {
namespace {

constexpr int kPanelWidth = 64;  // columns of a packed panel of B
constexpr int kTileRows = 4;     // rows of A per tile

// tile[i][0..64) = Σ_k a(i,k) b(k, 0..64), k in order, one fma per step, with b(k, ·) at
// B + k·ldb, on a vector boundary (V: the vector operations of one instruction set, V::lanes
// floats at a time)
template <class V, int Rows>
inline void tile_rows(std::ptrdiff_t K, const float* A, std::ptrdiff_t lda, const float* B, std::ptrdiff_t ldb,
                      float* tile) {
  constexpr int vectors = kPanelWidth / V::lanes;
  typename V::type acc[Rows][vectors];
  for (int i = 0; i < Rows; ++i)
    for (int v = 0; v < vectors; ++v) acc[i][v] = V::zero();
  for (std::ptrdiff_t k = 0; k < K; ++k) {
    const float* b = B + k * ldb;
    for (int i = 0; i < Rows; ++i) {
      const typename V::type a = V::broadcast(A[i * lda + k]);
      for (int v = 0; v < vectors; ++v) acc[i][v] = V::fma(a, V::load(b + v * V::lanes), acc[i][v]);
    }
  }
  for (int i = 0; i < Rows; ++i)
    for (int v = 0; v < vectors; ++v) V::store(tile + i * kPanelWidth + v * V::lanes, acc[i][v]);
}

template <class V>
void tile_product(int rows, std::ptrdiff_t K, const float* A, std::ptrdiff_t lda, const float* B, std::ptrdiff_t ldb,
                  float* tile) {
  switch (rows) {
    case 1: return tile_rows<V, 1>(K, A, lda, B, ldb, tile);
    case 2: return tile_rows<V, 2>(K, A, lda, B, ldb, tile);
    case 3: return tile_rows<V, 3>(K, A, lda, B, ldb, tile);
    default: return tile_rows<V, kTileRows>(K, A, lda, B, ldb, tile);
  }
}

}  // namespace
}  // namespace rnnsearch
