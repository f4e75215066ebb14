#include "rnnsearch/model/int8.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "rnnsearch/util/cpu.h"

#ifdef RNNSEARCH_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

namespace rnnsearch {

void Int8Matrix::assign(const MatCRef<float>& m) {
  rows = m.rows();
  cols = m.cols();
  values.resize(static_cast<size_t>(rows * cols));
  scales.resize(static_cast<size_t>(rows));
  for (Index i = 0; i < rows; ++i) {
    const auto row = m.row(i);
    const float largest = row.cwiseAbs().maxCoeff();
    // an all-zero row keeps scale 0 and quantizes to zeros
    const float scale = largest / 127.0f, inverse = largest > 0 ? 127.0f / largest : 0.0f;
    scales[static_cast<size_t>(i)] = scale;
    int8_t* out = values.data() + i * cols;
    for (Index k = 0; k < cols; ++k) out[k] = static_cast<int8_t>(std::lrint(row(k) * inverse));
  }
}

#ifdef RNNSEARCH_HAVE_ONEDNN

bool int8_supported() { return cpu_features().avx512_vnni || cpu_features().avx_vnni; }

void gemm_int8(const Int8Matrix& A, const Int8Matrix& B, MatRef<float> C, std::vector<int32_t>& sums) {
  const Index M = A.rows, N = B.rows, K = A.cols;
  if (B.cols != K || C.rows() != M || C.cols() != N) throw std::logic_error("gemm_int8: operand shapes do not match");
  if (M == 0 || N == 0) return;
  sums.resize(static_cast<size_t>(M * N));
  const int32_t no_offset = 0;
  // row-major sums = A Bᵀ, no zero points (the quantization is symmetric)
  const dnnl_status_t status = dnnl_gemm_s8s8s32('N', 'T', 'F', M, N, K, 1.0f, A.values.data(), K, 0,
                                                 B.values.data(), K, 0, 0.0f, sums.data(), N, &no_offset);
  if (status != dnnl_success) throw std::logic_error("gemm_int8: dnnl_gemm_s8s8s32 failed");
  // C(i, j) = scale_a[i] · scale_b[j] · sums(i, j)
  for (Index i = 0; i < M; ++i) {
    const float scale_a = A.scales[static_cast<size_t>(i)];
    const int32_t* sum = sums.data() + i * N;
    float* out = C.row(i).data();
    for (Index j = 0; j < N; ++j) out[j] = scale_a * B.scales[static_cast<size_t>(j)] * static_cast<float>(sum[j]);
  }
}

#else

bool int8_supported() { return false; }

void gemm_int8(const Int8Matrix&, const Int8Matrix&, MatRef<float>, std::vector<int32_t>&) {
  throw std::logic_error("gemm_int8: rnnsearch was built without oneDNN");
}

#endif

}  // namespace rnnsearch
