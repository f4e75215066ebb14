#pragma once
// All parameters (or all gradients, or an optimizer moment) of one model in a single
// contiguous buffer, with named matrix views into it. Templated over the scalar type:
// float for training and translation, double for the finite-difference gradient checks.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "rnnsearch/model/config.h"
#include "rnnsearch/kernels/tensor.h"

namespace rnnsearch {

template <class T>
class Parameters {
 public:
  explicit Parameters(const ModelConfig& config)
      : config_(config), layout_(parameter_layout(config)), values_(parameter_count(config), T(0)) {}

  const ModelConfig& config() const { return config_; }
  const ParamSpec& spec(Param p) const { return layout_[p]; }
  // Param 0 .. tensor_count() - 1 (kNumParams and, with deep transitions, more)
  int tensor_count() const { return static_cast<int>(layout_.size()); }
  // The gain and bias of a product's layer normalization (the model has layer normalization).
  NormParams norm(Param product) const {
    const int gain = layout_[product].norm_gain;
    if (gain < 0) throw std::logic_error("Parameters::norm: " + layout_[product].name + " is not normalised");
    return {static_cast<Param>(gain), static_cast<Param>(gain + 1)};
  }

  MatMap<T> mat(Param p) { return MatMap<T>(values_.data() + layout_[p].offset, layout_[p].rows, layout_[p].cols); }
  ConstMatMap<T> mat(Param p) const {
    return ConstMatMap<T>(values_.data() + layout_[p].offset, layout_[p].rows, layout_[p].cols);
  }
  RowVecMap<T> vec(Param p) { return RowVecMap<T>(values_.data() + layout_[p].offset, layout_[p].cols); }
  ConstRowVecMap<T> vec(Param p) const {
    return ConstRowVecMap<T>(values_.data() + layout_[p].offset, layout_[p].cols);
  }

  AlignedVector<T>& values() { return values_; }
  const AlignedVector<T>& values() const { return values_; }
  T* data(Param p) { return values_.data() + layout_[p].offset; }
  const T* data(Param p) const { return values_.data() + layout_[p].offset; }

  void set_zero() { std::fill(values_.begin(), values_.end(), T(0)); }

  // docs/design.md §1.6: every parameter uniform in [-scale, scale], then the layer-norm
  // gains 1 and their biases 0.
  void init_uniform(double scale, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> uniform(-scale, scale);
    for (T& v : values_) v = static_cast<T>(uniform(rng));
    for (const ParamSpec& spec : layout_)
      if (!std::isnan(spec.initial_value))
        std::fill(values_.begin() + spec.offset, values_.begin() + spec.offset + spec.size(), T(spec.initial_value));
  }

 private:
  ModelConfig config_;
  std::vector<ParamSpec> layout_;
  AlignedVector<T> values_;
};

}  // namespace rnnsearch
