#include "rnnsearch/kernels/invariant_gemm.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "invariant_gemm_tile.h"
#include "rnnsearch/util/cpu.h"

namespace rnnsearch {

#ifdef RNNSEARCH_INVARIANT_GEMM_X86
// invariant_gemm_avx512.cpp, invariant_gemm_avx2.cpp
void invariant_tile_avx512(int rows, std::ptrdiff_t K, const float* A, std::ptrdiff_t lda, const float* B,
                           std::ptrdiff_t ldb, float* tile);
void invariant_tile_avx2(int rows, std::ptrdiff_t K, const float* A, std::ptrdiff_t lda, const float* B,
                         std::ptrdiff_t ldb, float* tile);
#endif

namespace {

struct Scalar {
  using type = float;
  static constexpr int lanes = 1;
  static type zero() { return 0.0f; }
  static type broadcast(float x) { return x; }
  static type load(const float* p) { return *p; }
  static type fma(type a, type b, type c) { return std::fma(a, b, c); }
  static void store(float* p, type x) { *p = x; }
};

using TileFunction = void (*)(int, std::ptrdiff_t, const float*, std::ptrdiff_t, const float*, std::ptrdiff_t, float*);

TileFunction tile_function(InvariantGemmPath path) {
  switch (path) {
#ifdef RNNSEARCH_INVARIANT_GEMM_X86
    case InvariantGemmPath::avx512: return &invariant_tile_avx512;
    case InvariantGemmPath::avx2: return &invariant_tile_avx2;
#endif
    default: return &tile_product<Scalar>;
  }
}

}  // namespace

bool invariant_gemm_path_supported(InvariantGemmPath path) {
#ifdef RNNSEARCH_INVARIANT_GEMM_X86
  const CpuFeatures& cpu = cpu_features();
  if (path == InvariantGemmPath::avx512) return cpu.avx512;
  if (path == InvariantGemmPath::avx2) return cpu.avx2;
#endif
  return path == InvariantGemmPath::scalar;
}

InvariantGemmPath invariant_gemm_path() {
  static const InvariantGemmPath path = invariant_gemm_path_supported(InvariantGemmPath::avx512) ? InvariantGemmPath::avx512
                                        : invariant_gemm_path_supported(InvariantGemmPath::avx2) ? InvariantGemmPath::avx2
                                                                                                  : InvariantGemmPath::scalar;
  return path;
}

void gemm_invariant(Index M, Index N, Index K, const float* A, Index lda, const float* B, Index ldb,
                    bool transpose_b, float* C, Index ldc, bool accumulate) {
  gemm_invariant(invariant_gemm_path(), M, N, K, A, lda, B, ldb, transpose_b, C, ldc, accumulate);
}

void gemm_invariant(InvariantGemmPath path, Index M, Index N, Index K, const float* A, Index lda, const float* B,
                    Index ldb, bool transpose_b, float* C, Index ldc, bool accumulate) {
  if (!invariant_gemm_path_supported(path)) throw std::logic_error("gemm_invariant: the CPU lacks this path");
  const TileFunction tile_of = tile_function(path);
  // B's columns j0 .. j0+63, packed K×64 (zeros past N), then every tile of rows against them
  thread_local AlignedVector<float> panel;
  alignas(64) float tile[kTileRows * kPanelWidth];
  panel.resize(static_cast<size_t>(K * kPanelWidth));
  for (Index j0 = 0; j0 < N; j0 += kPanelWidth) {
    const Index width = std::min<Index>(kPanelWidth, N - j0);
    for (Index k = 0; k < K; ++k) {
      float* row = panel.data() + k * kPanelWidth;
      if (transpose_b)
        for (Index j = 0; j < width; ++j) row[j] = B[(j0 + j) * ldb + k];
      else
        std::copy(B + k * ldb + j0, B + k * ldb + j0 + width, row);
      std::fill(row + width, row + kPanelWidth, 0.0f);
    }
    for (Index i0 = 0; i0 < M; i0 += kTileRows) {
      const int rows = static_cast<int>(std::min<Index>(kTileRows, M - i0));
      tile_of(rows, K, A + i0 * lda, lda, panel.data(), kPanelWidth, tile);
      for (int i = 0; i < rows; ++i) {
        float* c = C + (i0 + i) * ldc + j0;
        const float* t = tile + i * kPanelWidth;
        if (accumulate)
          for (Index j = 0; j < width; ++j) c[j] += t[j];
        else
          for (Index j = 0; j < width; ++j) c[j] = t[j];
      }
    }
  }
}

}  // namespace rnnsearch
