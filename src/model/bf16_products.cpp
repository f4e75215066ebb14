#include "rnnsearch/model/bf16_products.h"

#include <stdexcept>

#include "rnnsearch/model/bf16.h"
#include "rnnsearch/model/output_layer.h"

namespace rnnsearch {

namespace {

thread_local const Bf16Weights* active_weights = nullptr;

void round_to_bf16(const float* in, size_t count, uint16_t* out) {
  for (size_t i = 0; i < count; ++i) out[i] = float_to_bf16(in[i]);
}

}  // namespace

void Bf16Weights::assign(const Parameters<float>& params) {
  const ModelConfig& cfg = params.config();
  base_ = params.values().data();  // the trainer swaps in the weight average to validate it
  if (params.values().size() != size_) {
    size_ = params.values().size();
    values_.reset(new uint16_t[size_]);
    converted_.clear();
    for (int p = 0; p < kNumParams; ++p) {
      const Param param = static_cast<Param>(p);
      const ParamSpec& spec = params.spec(param);
      if (!spec.present || spec.is_vector || param == src_emb || param == tgt_emb || param == projection_weight(cfg))
        continue;
      converted_.push_back({spec.offset, spec.offset + spec.size()});
    }
  }
  for (const Range& range : converted_)
    round_to_bf16(base_ + range.begin, range.end - range.begin, values_.get() + range.begin);
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
}

Bf16Products::~Bf16Products() { active_weights = nullptr; }

namespace {

// A column-major BLAS operand as the row-major rows×cols matrix of row stride ld it is in
// memory, in bf16: the parameters' copy when it is a parameter, else rounded into scratch.
const uint16_t* bf16_operand(const float* p, Index rows, Index cols, Index& ld, std::vector<uint16_t>& scratch) {
  if (const uint16_t* weights = active_weights->find(p, rows, cols, ld)) return weights;
  scratch.resize(static_cast<size_t>(rows * cols));
  for (Index i = 0; i < rows; ++i) round_to_bf16(p + i * ld, static_cast<size_t>(cols), scratch.data() + i * cols);
  ld = cols;
  return scratch.data();
}

}  // namespace

bool sgemm_in_bf16(char transa, char transb, int m, int n, int k, float alpha, const float* a, int lda,
                   const float* b, int ldb, float beta, float* c, int ldc) {
  if (!active_weights || alpha != 1.0f || (beta != 0.0f && beta != 1.0f)) return false;
  if (m == 0 || n == 0 || k == 0) return false;  // nothing to multiply: fp32 handles it
  // Column-major C (m×n) = op(A) op(B) is row-major Cᵀ (n×m) = op(B)ᵀ op(A)ᵀ, and a
  // column-major X with leading dimension ld is, in memory, the row-major Xᵀ: so B's memory
  // is op(B)ᵀ when B is not transposed (transposed, read it as its transpose), and so is A's.
  const bool ta = transa != 'N' && transa != 'n', tb = transb != 'N' && transb != 'n';
  thread_local std::vector<uint16_t> a_scratch, b_scratch;
  Index a_ld = lda, b_ld = ldb;
  const uint16_t* a16 = bf16_operand(a, ta ? m : k, ta ? k : m, a_ld, a_scratch);
  const uint16_t* b16 = bf16_operand(b, tb ? k : n, tb ? n : k, b_ld, b_scratch);
  gemm_bf16(n, m, k, b16, b_ld, tb, a16, a_ld, ta, c, ldc, beta == 1.0f);
  return true;
}

}  // namespace rnnsearch
