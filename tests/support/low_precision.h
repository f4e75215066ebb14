#pragma once
// What the bf16 and int8 tests share: the output layers a low-precision vocabulary
// projection serves, and the check that an ensemble decodes with its members' projections.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "fixtures.h"
#include "rnnsearch/decode/beam_search.h"
#include "rnnsearch/model/output_layer.h"

namespace rnnsearch::test {

// ‖got − want‖ / ‖want‖
inline double relative_difference(const MatCRef<float>& got, const MatCRef<float>& want) {
  return (got - want).norm() / want.norm();
}

// With e=32, n=24, l=32 and 300 target words, each with its name: maxout, maxout with tied
// target embeddings, linear output layers, maxout with layer normalization, maxout with a
// two-transition, two-layer encoder (with --skip) and a two-cell conditional decoder under a
// second two-transition decoder layer, and that deep model with layer normalization
// (Marian's deep s2s).
inline std::vector<std::pair<std::string, ModelConfig>> output_layer_variants() {
  std::vector<std::pair<std::string, ModelConfig>> variants;
  for (const char* name : {"maxout", "maxout tied", "linear", "maxout layer-normalized", "maxout deep",
                           "maxout deep layer-normalized"}) {
    const std::string kind = name;
    ModelConfig config = tiny_config(50, 300, kind == "linear" ? OutputKind::linear : OutputKind::maxout, 32, 24, 32);
    config.tied_embeddings = kind == "maxout tied";
    config.layer_norm = kind.find("layer-normalized") != std::string::npos;
    config.enc_cell_depth = kind.find("deep") != std::string::npos ? 2 : 1;
    config.dec_cell_base_depth = config.enc_depth = config.dec_depth = config.dec_cell_high_depth =
        config.enc_cell_depth;
    config.skip = config.enc_depth > 1;
    variants.emplace_back(kind, config);
  }
  return variants;
}

inline LowPrecisionProjection low_precision(const Bf16Projection& p) { return {&p, nullptr}; }
inline LowPrecisionProjection low_precision(const Int8Projection& p) { return {nullptr, &p}; }

// Decoding with each member of a two-model ensemble in Projection (Bf16Projection or
// Int8Projection): the best hypotheses' log-probabilities move by the roundings (at most
// relative_tolerance), not more, and do move (the low-precision path was taken). The members
// differ as an ensemble's may: the paper's decoder, and a conditional GRU under a second,
// deep-transition decoder layer with --skip (whose state is twice as wide).
template <class Projection>
void expect_ensemble_decodes_near_fp32(double relative_tolerance) {
  ModelConfig config = tiny_config(20, 40, OutputKind::maxout, 16, 12, 16);
  config.tied_embeddings = true;
  ModelConfig deep = config;
  deep.dec_cell_base_depth = deep.dec_depth = deep.dec_cell_high_depth = 2;
  deep.skip = true;
  Parameters<float> first(config), second(deep);
  first.init_uniform(0.5, 9);
  second.init_uniform(0.5, 10);
  Projection first_low, second_low;
  convert_projection(first, first_low);
  convert_projection(second, second_low);
  BeamSearch<float> fp32({&first, &second});
  BeamSearch<float> low({&first, &second}, {low_precision(first_low), low_precision(second_low)});
  const std::vector<std::vector<int>> sources = {{4, 5, 6, 7, 3}, {8, 9, 3}, {10, 11, 12, 3}};
  BeamOptions options;
  options.beam_size = 3;
  const auto want = fp32.search(sources, options), got = low.search(sources, options);
  for (size_t s = 0; s < sources.size(); ++s) {
    ASSERT_FALSE(want[s].empty());
    ASSERT_FALSE(got[s].empty());
    EXPECT_NEAR(got[s][0].log_prob, want[s][0].log_prob, relative_tolerance * std::abs(want[s][0].log_prob))
        << "sentence " << s;
    EXPECT_NE(got[s][0].log_prob, want[s][0].log_prob) << "sentence " << s << ": the low-precision path was not taken";
  }
}

}  // namespace rnnsearch::test
