#include "rnnsearch/train/optimizer.h"

#include <algorithm>
#include <cmath>

#include "rnnsearch/error.h"
#include "rnnsearch/io/npz.h"

namespace rnnsearch {

OptimizerKind parse_optimizer_kind(const std::string& name) {
  if (name == "adam") return OptimizerKind::adam;
  if (name == "sgd") return OptimizerKind::sgd;
  throw Error("unknown optimizer '" + name + "' (expected adam or sgd)");
}

Optimizer::Optimizer(const OptimizerOptions& options, size_t parameter_count, size_t begin, size_t end)
    : options_(options),
      parameter_count_(parameter_count),
      begin_(static_cast<long>(std::min(begin, parameter_count))),
      end_(static_cast<long>(std::min(end, parameter_count))) {
  if (options.kind == OptimizerKind::adam) {
    m_.assign(parameter_count, 0.f);
    v_.assign(parameter_count, 0.f);
  }
}

void Optimizer::step(FlatSpan<float> params, FlatSpan<const float> grads, float grad_scale) {
  // θ̄ starts as θ, copied for the part stepped here only: in shared memory (MPI ranks of one
  // host) the other ranks are writing theirs now; those parts are gathered before θ̄ is read.
  if (options_.smoothing > 0 && average_.empty()) {
    average_.assign(params.size(), 0.f);
    std::copy(params.begin() + begin_, params.begin() + end_, average_.begin() + begin_);
  }
  ++steps_;
  float* p = params.data();
  const float* g = grads.data();
  if (options_.kind == OptimizerKind::sgd) {
    const float lr = static_cast<float>(options_.lr);
#pragma omp parallel for simd schedule(static)
    for (long k = begin_; k < end_; ++k) p[k] -= lr * (grad_scale * g[k]);
  } else {
    adam_step(params, grads, grad_scale);
  }
  if (average_.empty()) return;
  // θ̄ += α_t (θ − θ̄), α_t = max(α, 9 / (9 + t)): early on the average forgets the random
  // initial weights quickly, so that short runs validate sensible weights too
  const float alpha = static_cast<float>(std::max(options_.smoothing, 9.0 / (9.0 + static_cast<double>(steps_))));
  float* a = average_.data();
#pragma omp parallel for simd schedule(static)
  for (long k = begin_; k < end_; ++k) a[k] += alpha * (p[k] - a[k]);
}

std::vector<AlignedVector<float>*> Optimizer::state() {
  std::vector<AlignedVector<float>*> arrays;
  for (AlignedVector<float>* array : {&m_, &v_, &average_})
    if (!array->empty()) arrays.push_back(array);
  return arrays;
}

void Optimizer::adam_step(FlatSpan<float> params, FlatSpan<const float> grads, float grad_scale) {
  float* p = params.data();
  const float* g = grads.data();
  const float beta1 = static_cast<float>(options_.beta1), beta2 = static_cast<float>(options_.beta2);
  // Bias corrections folded into the step size and epsilon:
  // lr m̂ / (sqrt(v̂) + ε) = (lr / c1) m / (sqrt(v) / sqrt(c2) + ε)
  const double c1 = 1 - std::pow(options_.beta1, steps_), c2 = 1 - std::pow(options_.beta2, steps_);
  const float step_size = static_cast<float>(options_.lr / c1);
  const float inv_sqrt_c2 = static_cast<float>(1 / std::sqrt(c2)), epsilon = static_cast<float>(options_.epsilon);
  float* m = m_.data();
  float* v = v_.data();
#pragma omp parallel for simd schedule(static)
  for (long k = begin_; k < end_; ++k) {
    const float gk = grad_scale * g[k];
    m[k] = beta1 * m[k] + (1 - beta1) * gk;
    v[k] = beta2 * v[k] + (1 - beta2) * gk * gk;
    p[k] -= step_size * m[k] / (std::sqrt(v[k]) * inv_sqrt_c2 + epsilon);
  }
}

void Optimizer::save(const std::string& path) const {
  const std::int64_t step = steps_;  // an integer, exact at any count (float32 is exact to 2^24)
  std::vector<NpyArrayView> arrays = {{"step", {1}, nullptr, &step}};
  if (options_.kind == OptimizerKind::adam) {
    arrays.push_back({"adam_m", {static_cast<long>(m_.size())}, m_.data()});
    arrays.push_back({"adam_v", {static_cast<long>(v_.size())}, v_.data()});
  }
  if (!average_.empty()) arrays.push_back({"average", {static_cast<long>(average_.size())}, average_.data()});
  save_npz(path, arrays);
}

void Optimizer::load(const std::string& path) {
  auto arrays = load_npz(path);
  auto take = [&](const std::string& name, AlignedVector<float>& into) {
    auto it = arrays.find(name);
    if (it == arrays.end()) throw Error(path + ": array '" + name + "' is missing");
    if (it->second.is_integer) throw Error(path + ": array '" + name + "' is int64, expected float32");
    if (it->second.data.size() != into.size())
      throw Error(path + ": array '" + name + "' holds " + std::to_string(it->second.data.size()) +
                  " values, the model has " + std::to_string(into.size()) + " parameters");
    into.assign(it->second.data.begin(), it->second.data.end());
  };
  auto step = arrays.find("step");
  if (step == arrays.end() || !step->second.is_integer || step->second.integers.size() != 1 ||
      step->second.integers[0] < 0)
    throw Error(path + ": array 'step' must be one non-negative int64");
  steps_ = static_cast<long>(step->second.integers[0]);
  if (options_.kind == OptimizerKind::adam) {
    take("adam_m", m_);
    take("adam_v", v_);
  }
  average_.clear();
  if (options_.smoothing > 0 && steps_ > 0) {
    if (!arrays.count("average"))
      throw Error(path + ": holds no weight average: the run was started without --exponential-smoothing, "
                         "which cannot be added when resuming");
    average_.resize(parameter_count_);
    take("average", average_);
  }
}

void norm_block_sums(FlatSpan<const float> grads, int first, int last, double* block_sums) {
  const size_t size = grads.size();
  const float* g = grads.data();
#pragma omp parallel for schedule(static)
  for (int b = first; b < last; ++b) {
    double sum = 0;
    const long end = static_cast<long>(norm_block_begin(size, b + 1));
#pragma omp simd reduction(+ : sum)
    for (long k = static_cast<long>(norm_block_begin(size, b)); k < end; ++k) sum += double(g[k]) * g[k];
    block_sums[b] = sum;
  }
}

double norm_from_block_sums(const double* block_sums) {
  double sum = 0;
  for (int b = 0; b < kNormBlocks; ++b) sum += block_sums[b];
  return std::sqrt(sum);
}

float clip_factor(double norm, double max_norm) {
  return max_norm > 0 && norm > max_norm ? static_cast<float>(max_norm / (norm + 1e-6)) : 1.0f;
}

}  // namespace rnnsearch
