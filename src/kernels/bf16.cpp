#include "rnnsearch/kernels/bf16.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "rnnsearch/kernels/onednn_matmul.h"
#include "rnnsearch/util/cpu.h"

namespace rnnsearch {

void Bf16Matrix::assign(const MatCRef<float>& m) {
  rows = m.rows();
  cols = m.cols();
  values.resize(static_cast<size_t>(rows * cols));
  // The vocabulary projection's weights, converted between updates, on all threads (inside
  // the training threads' region, for activations, on the calling thread alone)
#pragma omp parallel for schedule(static) if (rows * cols >= (1 << 18))
  for (Index i = 0; i < rows; ++i) {
    const float* in = m.row(i).data();
    uint16_t* out = values.data() + i * cols;
    for (Index k = 0; k < cols; ++k) out[k] = float_to_bf16(in[k]);
  }
}

namespace {

thread_local SgemmHook g_sgemm_hook = nullptr;

}  // namespace

void set_sgemm_hook(SgemmHook hook) { g_sgemm_hook = hook; }

SgemmHook sgemm_hook() { return g_sgemm_hook; }

bool bf16_training_supported() { return bf16_supported() && std::string(kGemmBackend) == "onednn"; }

#ifdef RNNSEARCH_HAVE_ONEDNN

bool bf16_supported() { return cpu_features().avx512_bf16; }

void gemm_bf16(const Bf16Matrix& A, bool transpose_a, const Bf16Matrix& B, bool transpose_b, MatRef<float> C,
               bool accumulate) {
  const Index M = transpose_a ? A.cols : A.rows, K = transpose_a ? A.rows : A.cols;
  const Index N = transpose_b ? B.rows : B.cols;
  if ((transpose_b ? B.cols : B.rows) != K || C.rows() != M || C.cols() != N)
    throw std::logic_error("gemm_bf16: operand shapes do not match");
  gemm_bf16(M, N, K, A.values.data(), A.cols, transpose_a, B.values.data(), B.cols, transpose_b, C.data(),
            C.outerStride(), accumulate);
}

void gemm_bf16(Index M, Index N, Index K, const uint16_t* A, Index lda, bool transpose_a, const uint16_t* B,
               Index ldb, bool transpose_b, float* C, Index ldc, bool accumulate) {
  onednn_matmul(MatmulType::bf16, M, N, K, A, lda, transpose_a, B, ldb, transpose_b, C, ldc, accumulate);
}

void gemm_bf16_fixed_blocks(const Bf16Matrix& A, const Bf16Matrix& B, bool transpose_b, MatRef<float> C) {
  const Index M = A.rows, K = A.cols, N = transpose_b ? B.rows : B.cols;
  if ((transpose_b ? B.cols : B.rows) != K || C.rows() != M || C.cols() != N)
    throw std::logic_error("gemm_bf16_fixed_blocks: operand shapes do not match");
  thread_local std::vector<uint16_t> last_rows;
  thread_local Mat<float> last_product;
  for (Index m0 = 0; m0 < M; m0 += kBf16BlockRows) {
    const Index rows = std::min(kBf16BlockRows, M - m0);
    const uint16_t* a = A.values.data() + m0 * K;
    if (rows == kBf16BlockRows) {
      gemm_bf16(rows, N, K, a, K, false, B.values.data(), B.cols, transpose_b, C.row(m0).data(), C.outerStride(),
                false);
      continue;
    }
    last_rows.assign(static_cast<size_t>(kBf16BlockRows * K), 0);
    std::copy(a, a + rows * K, last_rows.begin());
    last_product.resize(kBf16BlockRows, N);
    gemm_bf16(kBf16BlockRows, N, K, last_rows.data(), K, false, B.values.data(), B.cols, transpose_b,
              last_product.data(), N, false);
    C.middleRows(m0, rows) = last_product.topRows(rows);
  }
}

#else

bool bf16_supported() { return false; }

void gemm_bf16(const Bf16Matrix&, bool, const Bf16Matrix&, bool, MatRef<float>, bool) {
  throw std::logic_error("gemm_bf16: rnnsearch was built without oneDNN");
}

void gemm_bf16(Index, Index, Index, const uint16_t*, Index, bool, const uint16_t*, Index, bool, float*, Index, bool) {
  throw std::logic_error("gemm_bf16: rnnsearch was built without oneDNN");
}

void gemm_bf16_fixed_blocks(const Bf16Matrix&, const Bf16Matrix&, bool, MatRef<float>) {
  throw std::logic_error("gemm_bf16: rnnsearch was built without oneDNN");
}

#endif

}  // namespace rnnsearch
