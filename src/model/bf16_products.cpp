#include "rnnsearch/model/bf16_products.h"

#include <stdexcept>

#include "rnnsearch/kernels/bf16.h"
#include "rnnsearch/model/output_layer.h"

namespace rnnsearch {

namespace {

thread_local const Bf16Weights* active_weights = nullptr;

}  // namespace

void Bf16Weights::assign(const Parameters<float>& params) {
  const ModelConfig& cfg = params.config();
  base_ = params.values().data();  // the trainer validates the weight average from its own buffer
  if (params.values().size() != size_) {
    size_ = params.values().size();
    values_.reset(new uint16_t[size_]);
    converted_.clear();
    for (int p = 0; p < params.tensor_count(); ++p) {
      const Param param = static_cast<Param>(p);
      const ParamSpec& spec = params.spec(param);
      if (!spec.present || spec.is_vector || param == src_emb || param == tgt_emb || param == projection_weight(cfg))
        continue;
      converted_.push_back({spec.offset, spec.offset + spec.size()});
    }
  }
  // Between updates, on all the trainer's threads: run by one, this pass over the weights
  // was a serial part of every update.
#pragma omp parallel
  for (const Range& range : converted_) {
    const long count = static_cast<long>(range.end - range.begin);
#pragma omp for simd schedule(static) nowait
    for (long i = 0; i < count; ++i) values_[range.begin + i] = float_to_bf16(base_[range.begin + i]);
  }
}

const uint16_t* Bf16Weights::find(const float* p, Index rows, Index cols, Index ld) const {
  if (p < base_ || p >= base_ + size_) return nullptr;
  const size_t begin = static_cast<size_t>(p - base_);
  const size_t end = begin + static_cast<size_t>((rows - 1) * ld + cols);
  for (const Range& range : converted_)
    if (range.begin <= begin && end <= range.end) return values_.get() + begin;
  return nullptr;
}

Bf16Products::Bf16Products(const Bf16Weights& weights) {
  if (active_weights) throw std::logic_error("Bf16Products: already active on this thread");
  active_weights = &weights;
  set_sgemm_hook(&sgemm_in_bf16);
}

Bf16Products::~Bf16Products() {
  set_sgemm_hook(nullptr);
  active_weights = nullptr;
}

int product_slice_length(int remaining) {
  if (remaining >= kProductSliceLength) return kProductSliceLength;
  int length = 1;
  while (2 * length <= remaining) length *= 2;
  return length;
}

namespace {

// A column-major BLAS operand as the row-major rows×cols matrix of row stride ld it is in
// memory, in bf16: the parameters' copy when it is a parameter, else rounded into scratch.
const uint16_t* bf16_operand(const float* p, Index rows, Index cols, Index& ld, Bf16Matrix& scratch) {
  if (const uint16_t* weights = active_weights->find(p, rows, cols, ld)) return weights;
  scratch.assign(Eigen::Map<const Mat<float>, 0, Eigen::OuterStride<>>(p, rows, cols, Eigen::OuterStride<>(ld)));
  ld = cols;
  return scratch.values.data();
}

// C = op(A) op(B) (+ C when accumulate), column-major as in sgemm_
void product_in_bf16(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                     bool accumulate, float* c, int ldc) {
  // Column-major C (m×n) = op(A) op(B) is row-major Cᵀ (n×m) = op(B)ᵀ op(A)ᵀ, and a
  // column-major X with leading dimension ld is, in memory, the row-major Xᵀ: so B's memory
  // is op(B)ᵀ when B is not transposed (transposed, read it as its transpose), and so is A's.
  thread_local Bf16Matrix a_scratch, b_scratch;
  Index a_ld = lda, b_ld = ldb;
  const uint16_t* a16 = bf16_operand(a, ta ? m : k, ta ? k : m, a_ld, a_scratch);
  const uint16_t* b16 = bf16_operand(b, tb ? k : n, tb ? n : k, b_ld, b_scratch);
  gemm_bf16(n, m, k, b16, b_ld, tb, a16, a_ld, ta, c, ldc, accumulate);
}

}  // namespace

bool sgemm_in_bf16(char transa, char transb, int m, int n, int k, float alpha, const float* a, int lda,
                   const float* b, int ldb, float beta, float* c, int ldc) {
  if (!active_weights || alpha != 1.0f || (beta != 0.0f && beta != 1.0f)) return false;
  if (m == 0 || n == 0 || k == 0) return false;  // nothing to multiply: fp32 handles it
  const bool ta = transa != 'N' && transa != 'n', tb = transb != 'N' && transb != 'n';
  const bool accumulate = beta == 1.0f;
  // The side that depends on the batch: the other operand's outer side when one operand is a
  // parameter (x W, dy Wᵀ), the inner one when neither is (the weight gradients xᵀ dy).
  const bool a_parameter = active_weights->find(a, ta ? m : k, ta ? k : m, lda) != nullptr;
  const bool b_parameter = active_weights->find(b, tb ? k : n, tb ? n : k, ldb) != nullptr;
  // Column j of the column-major op(X) starts at x + j·ld, row i at x + i; transposed, the
  // other way round.
  if (a_parameter && b_parameter) {  // no side depends on the batch (not met in the model)
    product_in_bf16(ta, tb, m, n, k, a, lda, b, ldb, accumulate, c, ldc);
  } else if (a_parameter) {  // C[:, slice] = op(A) op(B)[:, slice]
    for (int n0 = 0, length; n0 < n; n0 += length) {
      length = product_slice_length(n - n0);
      product_in_bf16(ta, tb, m, length, k, a, lda, tb ? b + n0 : b + n0 * ldb, ldb, accumulate, c + n0 * ldc, ldc);
    }
  } else if (b_parameter) {  // C[slice, :] = op(A)[slice, :] op(B)
    for (int m0 = 0, length; m0 < m; m0 += length) {
      length = product_slice_length(m - m0);
      product_in_bf16(ta, tb, length, n, k, ta ? a + m0 * lda : a + m0, lda, b, ldb, accumulate, c + m0, ldc);
    }
  } else {  // C = Σ_slices op(A)[:, slice] op(B)[slice, :]
    for (int k0 = 0, length; k0 < k; k0 += length) {
      length = product_slice_length(k - k0);
      product_in_bf16(ta, tb, m, n, length, ta ? a + k0 : a + k0 * lda, lda, tb ? b + k0 * ldb : b + k0, ldb,
                      accumulate || k0 > 0, c, ldc);
    }
  }
  return true;
}

}  // namespace rnnsearch
