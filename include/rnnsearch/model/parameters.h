#pragma once
// All parameters (or all gradients, or an optimizer moment) of one model in a single
// contiguous buffer, with named matrix views into it. Templated over the scalar type:
// float for training and translation, double for the finite-difference gradient checks.
// The buffer is the object's own, or, after use_storage, memory it does not own (the MPI
// ranks of one host keep the weights and their gradients in memory they share:
// train/weight_partition.h). A copy always owns its buffer.
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
      : config_(config), layout_(parameter_layout(config)), owned_(parameter_count(config), T(0)), values_(owned_) {}
  // The values are the parameter_count(config) elements at storage, which must outlive this.
  Parameters(const ModelConfig& config, T* storage)
      : config_(config), layout_(parameter_layout(config)), values_(storage, parameter_count(config)) {}
  Parameters(const Parameters& other)
      : config_(other.config_), layout_(other.layout_), owned_(other.values_.begin(), other.values_.end()),
        values_(owned_) {}
  Parameters(Parameters&& other) noexcept
      : config_(std::move(other.config_)), layout_(std::move(other.layout_)), owned_(std::move(other.owned_)),
        values_(std::exchange(other.values_, {})) {}  // a moved vector keeps its buffer
  Parameters& operator=(Parameters other) noexcept {
    std::swap(config_, other.config_);
    layout_.swap(other.layout_);
    owned_.swap(other.owned_);
    std::swap(values_, other.values_);
    return *this;
  }

  // From now on the values are the size() elements at storage, which must outlive this
  // object; they are not copied there, and the buffer owned until now is released.
  void use_storage(T* storage) {
    values_ = FlatSpan<T>(storage, values_.size());
    AlignedVector<T>().swap(owned_);
  }

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

  FlatSpan<T> values() { return values_; }
  FlatSpan<const T> values() const { return values_; }
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
  AlignedVector<T> owned_;  // empty after use_storage
  FlatSpan<T> values_;      // owned_'s, or the storage given
};

}  // namespace rnnsearch
