#include "rnnsearch/kernels/bf16.h"

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

#else

bool bf16_supported() { return false; }

void gemm_bf16(const Bf16Matrix&, bool, const Bf16Matrix&, bool, MatRef<float>, bool) {
  throw std::logic_error("gemm_bf16: rnnsearch was built without oneDNN");
}

void gemm_bf16(Index, Index, Index, const uint16_t*, Index, bool, const uint16_t*, Index, bool, float*, Index, bool) {
  throw std::logic_error("gemm_bf16: rnnsearch was built without oneDNN");
}

#endif

}  // namespace rnnsearch
