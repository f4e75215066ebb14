#include "rnnsearch/kernels/int8.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "rnnsearch/kernels/onednn_matmul.h"
#include "rnnsearch/util/cpu.h"

#ifdef RNNSEARCH_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

namespace rnnsearch {

void Int8Matrix::assign(const MatCRef<float>& m, int top_level) {
  rows = m.rows();
  cols = m.cols();
  levels = top_level;
  values.resize(static_cast<size_t>(rows * cols));
  scales.resize(static_cast<size_t>(rows));
  row_sums.resize(static_cast<size_t>(rows));
  const float top = static_cast<float>(top_level);
  for (Index i = 0; i < rows; ++i) {
    const auto row = m.row(i);
    const float largest = row.cwiseAbs().maxCoeff();
    // an all-zero row keeps scale 0 and quantizes to zeros
    const float scale = largest / top, inverse = largest > 0 ? top / largest : 0.0f;
    scales[static_cast<size_t>(i)] = scale;
    int8_t* out = values.data() + i * cols;
    int32_t sum = 0;
    for (Index k = 0; k < cols; ++k) {
      out[k] = static_cast<int8_t>(std::lrint(row(k) * inverse));
      sum += out[k];
    }
    row_sums[static_cast<size_t>(i)] = sum;
  }
}

#ifdef RNNSEARCH_HAVE_ONEDNN

namespace {

bool has_vnni() { return cpu_features().avx512_vnni || cpu_features().avx_vnni; }

}  // namespace

bool int8_supported() { return has_vnni() || cpu_features().avx2; }

int int8_weight_levels() { return has_vnni() ? 127 : 63; }

Int8Kernel int8_kernel() { return cpu_features().amx ? Int8Kernel::matmul : Int8Kernel::gemm; }

void gemm_int8(const Int8Matrix& A, const Int8Matrix& B, MatRef<float> C, Int8Workspace& work, Int8Kernel kernel) {
  const Index M = A.rows, N = B.rows, K = A.cols;
  if (B.cols != K || C.rows() != M || C.cols() != N) throw std::logic_error("gemm_int8: operand shapes do not match");
  if (B.levels > int8_weight_levels()) throw std::logic_error("gemm_int8: B's values would saturate this CPU's sums");
  if (M == 0 || N == 0) return;
  // Beyond 16, the matmul's rows rounded up to the AMX tile's 16: a decoder step's row count
  // changes from step to step, and each new shape costs a JIT-compiled primitive, so far
  // fewer are made. Up to 16 rows (one sentence's beam) they are not: there the zero rows'
  // int32 results cost more than the shapes save (measured in CHANGELOG.md, b293a0c).
  const Index rows = kernel == Int8Kernel::matmul && M > 16 ? (M + 15) / 16 * 16 : M;
  work.sums.resize(static_cast<size_t>(rows * N));
  int32_t* sums = work.sums.data();
  const int32_t no_offset = 0;
  int32_t shift = 0;  // what A was shifted by (to unsigned, without VNNI)
  dnnl_status_t status = dnnl_success;
  if (kernel == Int8Kernel::matmul) {
    // row-major sums = A Bᵀ (B read as its transpose), oneDNN's own u8 shift where it needs one
    const int8_t* a = A.values.data();
    if (rows != M) {  // A's rows, then zeros
      work.padded_a.resize(static_cast<size_t>(rows * K));
      const auto end = std::copy(A.values.begin(), A.values.begin() + M * K, work.padded_a.begin());
      std::fill(end, work.padded_a.end(), int8_t{0});
      a = work.padded_a.data();
    }
    onednn_matmul(MatmulType::s8, rows, N, K, a, K, false, B.values.data(), K, true, sums, N, false);
  } else if (has_vnni()) {
    // row-major sums = A Bᵀ, no zero points (the quantization is symmetric)
    status = dnnl_gemm_s8s8s32('N', 'T', 'F', M, N, K, 1.0f, A.values.data(), K, 0, B.values.data(), K, 0, 0.0f,
                               sums, N, &no_offset);
  } else {
    // sums = (A + 128) Bᵀ; the 128 Σ_k b(j,k) comes off below
    shift = 128;
    work.unsigned_a.resize(A.values.size());
    for (size_t k = 0; k < A.values.size(); ++k) work.unsigned_a[k] = static_cast<uint8_t>(A.values[k] + 128);
    status = dnnl_gemm_u8s8s32('N', 'T', 'F', M, N, K, 1.0f, work.unsigned_a.data(), K, 0, B.values.data(), K, 0,
                               0.0f, sums, N, &no_offset);
  }
  if (status != dnnl_success) throw std::logic_error("gemm_int8: oneDNN's int8 gemm failed");
  // C(i, j) = scale_a[i] · scale_b[j] · (sums(i, j) - shift · row_sums_b[j])
  for (Index i = 0; i < M; ++i) {
    const float scale_a = A.scales[static_cast<size_t>(i)];
    const int32_t* sum = sums + i * N;
    float* out = C.row(i).data();
    for (Index j = 0; j < N; ++j)
      out[j] = scale_a * B.scales[static_cast<size_t>(j)] *
               static_cast<float>(sum[j] - shift * B.row_sums[static_cast<size_t>(j)]);
  }
}

#else

bool int8_supported() { return false; }

int int8_weight_levels() { return 127; }

Int8Kernel int8_kernel() { return Int8Kernel::gemm; }

void gemm_int8(const Int8Matrix&, const Int8Matrix&, MatRef<float>, Int8Workspace&, Int8Kernel) {
  throw std::logic_error("gemm_int8: rnnsearch was built without oneDNN");
}

#endif

}  // namespace rnnsearch
