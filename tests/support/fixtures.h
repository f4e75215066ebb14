#pragma once
// Shared test fixtures: the tiny model configurations the model, decoding and CLI tests
// build their random models from.
#include <cmath>
#include <random>

#include "rnnsearch/model/config.h"
#include "rnnsearch/model/parameters.h"

namespace rnnsearch::test {

// Built with AddressSanitizer (scripts/sanitize.sh)? It reserves terabytes of address space,
// so tests that run under an address-space limit (ulimit -v) cannot run then.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

// A model small enough to check by brute force or finite differences: e=4, n=5, l=3 unless
// a test needs other sizes (e.g. distinct ones, so that a shape names its dimension).
inline ModelConfig tiny_config(int src_vocab, int tgt_vocab, OutputKind output = OutputKind::maxout,
                               int emb = 4, int hidden = 5, int maxout = 3) {
  ModelConfig c;
  c.src_vocab = src_vocab;
  c.tgt_vocab = tgt_vocab;
  c.emb = emb;
  c.hidden = hidden;
  c.maxout = maxout;
  c.output = output;
  return c;
}

// Issue 42's Marian-style deep s2s model on top of a config (Marian's --enc-cell-depth 2
// --enc-depth 2 --dec-cell-base-depth 2 --dec-depth 2 --dec-cell-high-depth 2 --skip
// --layer-normalization): two transitions per encoder step, two stacked layers per encoder
// direction, the conditional GRU under a second decoder layer of two transitions, residual
// connections and layer normalization.
inline ModelConfig deep_s2s(ModelConfig c) {
  c.enc_cell_depth = c.enc_depth = 2;
  c.dec_cell_base_depth = c.dec_depth = c.dec_cell_high_depth = 2;
  c.skip = c.layer_norm = true;
  return c;
}

// Every weight uniform in [−scale, scale], then the layer norms' gains and biases (which start
// at 1 and 0) drawn around 1 and 0, so that a γ or β used in the wrong place shows.
template <class T>
void init_for_check(Parameters<T>& params, double scale, uint64_t seed) {
  params.init_uniform(scale, seed);
  std::mt19937_64 rng(seed + 1000);
  std::uniform_real_distribution<double> around(-0.5, 0.5);
  for (int p = 0; p < params.tensor_count(); ++p) {
    const ParamSpec& spec = params.spec(static_cast<Param>(p));
    if (std::isnan(spec.initial_value)) continue;
    for (size_t k = spec.offset; k < spec.offset + spec.size(); ++k)
      params.values()[k] = static_cast<T>(spec.initial_value + around(rng));
  }
}

}  // namespace rnnsearch::test
