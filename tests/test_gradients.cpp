// Finite-difference checks of every hand-written backward function, in double precision with
// (five-point) central differences, on a tiny model: e=4, n=5, l=3, vocabularies of 11, a batch of 3
// sentences of different lengths. Also: the float computation agrees with the double one,
// and the batched forward agrees with a plain sentence-by-sentence loop over the equations, and
// the shards of ShardedModel add an update's batches into their gradients (--accumulate).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "support/fixtures.h"
#include "rnnsearch/model/attention.h"
#include "rnnsearch/model/decoder_step.h"
#include "rnnsearch/model/gru.h"
#include "rnnsearch/model/layer_norm.h"
#include "rnnsearch/model/rnnsearch.h"
#include "rnnsearch/train/sharded_model.h"

namespace rnnsearch {
namespace {

// Five-point central differences, f'(x) ≈ (8(f(x+h) − f(x−h)) − (f(x+2h) − f(x−2h))) / 12h:
// truncation O(h⁴) is negligible at h = 1e-4 and rounding stays ~1e-11, so gradients above
// kRelativeFrom are compared relatively and smaller ones to kRelativeFrom · kMaxRelativeError
// = 2e-11 absolute. (The rounding depends on the CPU's products: on an AVX-512 Xeon, family 6
// model 167, one src_emb entry of 2.4e-6 of the deep layer-normalized case differed by
// 1.03e-11 at h = 1e-4, 1.56e-11 at h/2 and < 3e-12 at 2h: rounding, ∝ 1/h, not a wrong
// gradient.) h must stay small: a larger step can cross a near-tie of a maxout pair, where
// the cost has a kink. Every tensor needs a gradient above kVacuityFloor, or its check is vacuous.
constexpr double kStep = 1e-4;
constexpr double kVacuityFloor = 1e-5;
constexpr double kRelativeFrom = 2e-5;
constexpr double kMaxRelativeError = 1e-6;

double relative_error(double analytic, double numeric) {
  return std::abs(analytic - numeric) / std::max({std::abs(analytic), std::abs(numeric), kRelativeFrom});
}

// d loss / d x at x = *value, restoring *value afterwards.
template <class Loss>
double numeric_derivative(double* value, Loss loss) {
  const double saved = *value;
  auto at = [&](double offset) {
    *value = saved + offset;
    return loss();
  };
  const double d = (8 * (at(kStep) - at(-kStep)) - (at(2 * kStep) - at(-2 * kStep))) / (12 * kStep);
  *value = saved;
  return d;
}

// Three sentence pairs of different lengths (ids 4..10 are words, 3 is </s>).
Batch tiny_batch(bool padded) {
  if (!padded) return pad_batch({{4, 5, 3}, {6, 7, 3}, {8, 9, 3}}, {{5, 6, 7, 3}, {8, 9, 4, 3}, {10, 5, 6, 3}},
                                {0, 1, 2});
  return pad_batch({{4, 5, 6, 7, 3}, {8, 3}, {9, 10, 4, 3}}, {{5, 6, 3}, {7, 8, 9, 10, 4, 3}, {6, 3}},
                   {0, 1, 2});
}

struct Case {
  OutputKind output;
  bool padded;
  double embedding_dropout, output_dropout, label_smoothing;
  bool tied_embeddings = false;
  bool layer_norm = false;
  int enc_cell_depth = 1;
  int dec_cell_base_depth = 1;
  int enc_depth = 1;
  bool skip = false;
  int dec_depth = 1;
  int dec_cell_high_depth = 1;
  EncoderType enc_type = EncoderType::bidirectional;
  double source_word_dropout = 0, target_word_dropout = 0;
  double rnn_dropout = 0;
  double guided_alignment = 0;  // weight of the guided-alignment cost (the batch then has links)
  GuidedAlignmentCost guided_alignment_cost = GuidedAlignmentCost::ce;
  int alignment_output = 0;         // units of the alignment output (guided alignment trains it)
  bool alignment_output_backprop = false;
};

// c with an alignment output of `units` trained by guided alignment's cost; backprop: that cost
// reaches the decoder and the encoder too.
Case with_alignment_output(Case c, int units, double weight, GuidedAlignmentCost cost, bool backprop) {
  c.guided_alignment = weight;
  c.guided_alignment_cost = cost;
  c.alignment_output = units;
  c.alignment_output_backprop = backprop;
  return c;
}

// c with guided alignment's cost as well (the batch gets links: with_links).
Case with_guided_alignment(Case c, double weight, GuidedAlignmentCost cost) {
  c.guided_alignment = weight;
  c.guided_alignment_cost = cost;
  return c;
}

// The batch with links between its pieces (source, target positions; </s> too): target
// rows with one link, with two, and without.
Batch with_links(Batch batch) {
  const std::vector<std::vector<int>> links = batch.src_len == 3
                                                  ? std::vector<std::vector<int>>{{0, 0, 1, 2, 2, 3}, {0, 1, 1, 1, 2, 0}, {1, 0}}
                                                  : std::vector<std::vector<int>>{{0, 0, 1, 1, 3, 1, 4, 2}, {0, 0, 1, 3, 0, 4, 1, 5}, {3, 1, 2, 0}};
  batch.link_starts = {0};
  for (const std::vector<int>& sentence : links) {
    batch.links.insert(batch.links.end(), sentence.begin(), sentence.end());
    batch.link_starts.push_back(static_cast<int>(batch.links.size() / 2));
  }
  return batch;
}

// c with word dropout (--dropout-src, --dropout-trg) as well.
Case with_word_dropout(Case c, double source, double target) {
  c.source_word_dropout = source;
  c.target_word_dropout = target;
  return c;
}

// c with recurrent dropout (--dropout-rnn) as well.
Case with_rnn_dropout(Case c, double rate) {
  c.rnn_dropout = rate;
  return c;
}

// A case as gtest prints it and ctest names it: the output layer, then what differs from
// the shallow model, e.g. maxout_padded_dropout32_smoothing1_tied_ln_encCell2_decBase2_enc2_skip_dec2_decHigh2
// (dropout: the embeddings' and the output's, in tenths; words: word dropout, the source's and
// the target's, in tenths; depths and layers as their options).
std::string describe(const Case& c) {
  const auto tenths = [](double x) { return std::to_string(std::lround(10 * x)); };
  std::string name = output_kind_name(c.output);
  if (c.padded) name += "_padded";
  if (c.embedding_dropout > 0 || c.output_dropout > 0)
    name += "_dropout" + tenths(c.embedding_dropout) + tenths(c.output_dropout);
  if (c.source_word_dropout > 0 || c.target_word_dropout > 0)
    name += "_words" + tenths(c.source_word_dropout) + tenths(c.target_word_dropout);
  if (c.rnn_dropout > 0) name += "_rnn" + tenths(c.rnn_dropout);
  if (c.guided_alignment > 0)
    name += std::string("_guided") + guided_alignment_cost_name(c.guided_alignment_cost) + tenths(c.guided_alignment);
  if (c.alignment_output > 0)
    name += "_alignmentOutput" + std::to_string(c.alignment_output) + (c.alignment_output_backprop ? "backprop" : "");
  if (c.label_smoothing > 0) name += "_smoothing" + tenths(c.label_smoothing);
  if (c.tied_embeddings) name += "_tied";
  if (c.layer_norm) name += "_ln";
  const std::pair<const char*, int> depths[] = {{"_encCell", c.enc_cell_depth}, {"_decBase", c.dec_cell_base_depth},
                                                {"_enc", c.enc_depth}};
  for (const auto& [option, depth] : depths)
    if (depth > 1) name += option + std::to_string(depth);
  if (c.enc_type == EncoderType::alternating) name += "_alternating";
  if (c.skip) name += "_skip";
  if (c.dec_depth > 1) name += "_dec" + std::to_string(c.dec_depth);
  if (c.dec_cell_high_depth > 1) name += "_decHigh" + std::to_string(c.dec_cell_high_depth);
  return name;
}
void PrintTo(const Case& c, std::ostream* out) { *out << describe(c); }

// The three output layers: maxout, linear, maxout with tied embeddings.
const Case kOutputLayers[] = {{OutputKind::maxout, false, 0, 0, 0, false},
                              {OutputKind::linear, false, 0, 0, 0, false},
                              {OutputKind::maxout, false, 0, 0, 0, true}};

// The tiny model; tied embeddings need l = e, so that case has 4 maxout units.
ModelConfig config_of(const Case& c) {
  ModelConfig config = test::tiny_config(11, 11, c.output, 4, 5, c.tied_embeddings ? 4 : 3);
  config.tied_embeddings = c.tied_embeddings;
  config.layer_norm = c.layer_norm;
  config.enc_cell_depth = c.enc_cell_depth;
  config.dec_cell_base_depth = c.dec_cell_base_depth;
  config.enc_depth = c.enc_depth;
  config.skip = c.skip;
  config.dec_depth = c.dec_depth;
  config.dec_cell_high_depth = c.dec_cell_high_depth;
  config.enc_type = c.enc_type;
  config.alignment_output = c.alignment_output;
  return config;
}

class ModelGradient : public ::testing::TestWithParam<Case> {};

// Under AddressSanitizer (scripts/sanitize.sh, at -O1) the whole model's forward pass runs
// 20 to 100 times slower than here, and these checks took 300 of its suite's 1,060 CPU
// seconds. What the sanitizers look for (memory and undefined behaviour) every entry's
// forward passes meet alike (a changed value takes the same code path), so there the check
// takes every 8th entry of a tensor of more than 32 (and its last); elsewhere every entry,
// which also shows that no tensor's check is vacuous.
constexpr size_t kSanitizedEntryStride = 8;

// Checks every entry of every parameter tensor of the whole model (its "inputs" are token
// ids, so the embedding tables are the input gradients).
TEST_P(ModelGradient, MatchesCentralDifferences) {
  const Case c = GetParam();
  Parameters<double> params(config_of(c));
  // Weights larger than the default 0.1 so that every path matters. With layer normalization
  // and several GRU steps per position, small weights make small products, which the
  // normalization divides by their small spread: the cost's higher derivatives grow, and at
  // ±0.5 the differences' O(h⁴) truncation reached 1.6e-5 at h = 1e-4 (16-fold less at h/2,
  // none at h/4: truncation, not a wrong gradient; at ±0.3 it was worse). Those models draw
  // from ±1.
  const ModelConfig& config = params.config();
  const bool deep = config.enc_cell_depth * config.enc_depth + config.dec_cell_base_depth +
                        (config.dec_depth - 1) * config.dec_cell_high_depth >
                    3;
  test::init_for_check(params, config.layer_norm && deep ? 1.0 : 0.5, 7);
  const Batch batch = c.guided_alignment > 0 ? with_links(tiny_batch(c.padded)) : tiny_batch(c.padded);
  // a fixed seed gives the same masks every call
  const Regularization regularization{c.embedding_dropout,   c.output_dropout, c.source_word_dropout,
                                      c.target_word_dropout, c.rnn_dropout,    c.label_smoothing,
                                      99,                    c.guided_alignment, c.guided_alignment_cost,
                                      c.alignment_output_backprop};
  const double tokens = static_cast<double>(batch.target_tokens());
  ModelWorkspace<double> ws;

  auto cost = [&] { return rnnsearch_forward<double>(params, batch, regularization, ws) / tokens; };
  // Without --alignment-output-backprop the alignment output's cost trains aln_* alone: the rest
  // of the model gets the gradient of the translation cost, the whole cost less that part.
  auto translation_cost = [&] {
    const double whole = rnnsearch_forward<double>(params, batch, regularization, ws);
    return (whole - ws.guided_cost) / tokens;
  };
  const bool detached = c.alignment_output > 0 && !c.alignment_output_backprop;
  Parameters<double> grads(params.config());
  grads.set_zero();
  const double fused_cost = rnnsearch_forward_backward<double>(params, batch, regularization, 1.0 / tokens, ws, grads);
  EXPECT_NEAR(fused_cost / tokens, cost(), 1e-12);
  if (c.guided_alignment > 0) {
    EXPECT_GT(ws.guided_cost, 0.01) << "the guided-alignment cost is part of the check";
  }

  for (int p = 0; p < params.tensor_count(); ++p) {
    const ParamSpec& spec = params.spec(static_cast<Param>(p));
    if (!spec.present) continue;
    const bool aln = spec.name.rfind("aln_", 0) == 0;
    double worst = 0, largest = 0;
    const size_t stride = test::kAddressSanitizer && spec.size() > 32 ? kSanitizedEntryStride : 1;
    std::vector<size_t> entries;  // every entry, or every stride-th and the last
    for (size_t k = spec.offset; k < spec.offset + spec.size(); k += stride) entries.push_back(k);
    if (entries.back() != spec.offset + spec.size() - 1) entries.push_back(spec.offset + spec.size() - 1);
    for (const size_t k : entries) {
      const double numeric = detached && !aln ? numeric_derivative(&params.values()[k], translation_cost)
                                              : numeric_derivative(&params.values()[k], cost);
      worst = std::max(worst, relative_error(grads.values()[k], numeric));
      largest = std::max(largest, std::abs(numeric));
    }
    EXPECT_LT(worst, kMaxRelativeError) << spec.name;
    if (stride == 1) {  // (the sampled entries may all be small: the unsampled run checks this)
      EXPECT_GT(largest, kVacuityFloor) << spec.name << ": the check would be vacuous";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllOutputKinds, ModelGradient,
                         ::testing::Values(Case{OutputKind::maxout, false, 0, 0, 0}, Case{OutputKind::maxout, true, 0, 0, 0},
                                           Case{OutputKind::linear, false, 0, 0, 0}, Case{OutputKind::linear, true, 0, 0, 0},
                                           Case{OutputKind::maxout, true, 0.3, 0.3, 0}, Case{OutputKind::linear, true, 0.3, 0.3, 0},
                                           Case{OutputKind::maxout, true, 0.2, 0.4, 0}, Case{OutputKind::maxout, true, 0, 0, 0.1},
                                           Case{OutputKind::linear, true, 0.3, 0.1, 0.2},
                                           Case{OutputKind::maxout, true, 0, 0, 0, true},
                                           Case{OutputKind::maxout, true, 0.3, 0.2, 0.1, true},
                                           // --layer-normalization: every gain and bias, and every tensor through them
                                           Case{OutputKind::maxout, false, 0, 0, 0, false, true},
                                           Case{OutputKind::maxout, true, 0, 0, 0, false, true},
                                           Case{OutputKind::linear, true, 0.3, 0.2, 0.1, false, true},
                                           Case{OutputKind::maxout, true, 0.3, 0.2, 0.1, true, true},
                                           // --enc-cell-depth: every transition's U and b (and their gains and biases)
                                           Case{OutputKind::maxout, true, 0, 0, 0, false, false, 2},
                                           Case{OutputKind::linear, true, 0.3, 0.2, 0.1, false, false, 3},
                                           Case{OutputKind::maxout, true, 0, 0, 0, false, true, 3},
                                           Case{OutputKind::maxout, true, 0.3, 0.2, 0.1, true, true, 2},
                                           // --dec-cell-base-depth: the conditional GRU's cells
                                           Case{OutputKind::maxout, true, 0, 0, 0, false, false, 1, 2},
                                           Case{OutputKind::linear, true, 0.3, 0.2, 0.1, false, false, 1, 3},
                                           Case{OutputKind::maxout, true, 0, 0, 0, false, true, 3, 3},
                                           Case{OutputKind::maxout, true, 0.3, 0.2, 0.1, true, true, 2, 2},
                                           // --enc-depth, --skip: every layer's W, U, b (and transitions)
                                           Case{OutputKind::maxout, true, 0, 0, 0, false, false, 1, 1, 2},
                                           Case{OutputKind::linear, true, 0.3, 0.2, 0.1, false, false, 1, 1, 3, true},
                                           Case{OutputKind::maxout, true, 0, 0, 0, false, true, 2, 1, 2, true},
                                           Case{OutputKind::maxout, true, 0.3, 0.2, 0.1, true, true, 2, 2, 2, true},
                                           // --dec-depth, --dec-cell-high-depth: every decoder layer's W, U, b
                                           // and transitions, and s_0 through each layer's start state
                                           Case{OutputKind::maxout, true, 0, 0, 0, false, false, 1, 2, 1, false, 2},
                                           Case{OutputKind::linear, true, 0.3, 0.2, 0.1, false, false, 1, 2, 1, true, 3, 2},
                                           // (with layer normalization this case's 5-point differences' truncation
                                           // reached 2.5e-5, 16-fold less at h/2; layer normalization with stacked
                                           // decoder layers is the Marian-style case below, H = 2)
                                           Case{OutputKind::maxout, true, 0, 0, 0, false, false, 1, 3, 1, true, 2, 3},
                                           // the Marian-style deep s2s configuration of issue 42
                                           Case{OutputKind::maxout, true, 0.3, 0.2, 0.1, true, true, 2, 2, 2, true, 2, 2},
                                           // --enc-type alternating: layer 2 of each stack reads the other way
                                           Case{OutputKind::maxout, true, 0, 0, 0, false, false, 1, 1, 3, true, 1, 1,
                                                EncoderType::alternating},
                                           Case{OutputKind::linear, true, 0.3, 0.2, 0.1, false, true, 2, 2, 2, true, 1, 1,
                                                EncoderType::alternating},
                                           Case{OutputKind::maxout, true, 0, 0, 0, false, false, 1, 2, 2, false, 1, 1,
                                                EncoderType::alternating},
                                           // --dropout-src, --dropout-trg: alone, with the other dropouts, and
                                           // with the conditional GRU and layer normalization
                                           with_word_dropout(Case{OutputKind::linear, true, 0, 0, 0}, 0.4, 0.4),
                                           with_word_dropout(Case{OutputKind::maxout, true, 0.3, 0.2, 0.1, true}, 0.3, 0.3),
                                           with_word_dropout(Case{OutputKind::maxout, true, 0.3, 0.2, 0.1, true, true, 1, 2},
                                                             0.2, 0.3),
                                           // --dropout-rnn: the shallow model, the conditional GRU with every
                                           // other dropout, and every kind of transition (encoder cells and
                                           // layers, decoder cells and layers) with layer normalization
                                           with_rnn_dropout(Case{OutputKind::maxout, true, 0, 0, 0}, 0.3),
                                           with_rnn_dropout(with_word_dropout(Case{OutputKind::linear, true, 0.3, 0.2, 0.1,
                                                                                   false, false, 1, 2},
                                                                              0.2, 0.2),
                                                            0.4),
                                           with_rnn_dropout(Case{OutputKind::maxout, true, 0.3, 0.2, 0.1, true, true, 2, 2,
                                                                 2, true, 2, 2},
                                                            0.3),
                                           with_rnn_dropout(Case{OutputKind::maxout, true, 0, 0, 0, false, false, 1, 3, 2,
                                                                 true, 2, 3, EncoderType::alternating},
                                                            0.3),
                                           // --guided-alignment: its cost on the attention, ce and mse, in the
                                           // paper's decoder and the conditional GRU, with dropouts and layer
                                           // normalization
                                           with_guided_alignment(Case{OutputKind::maxout, false, 0, 0, 0}, 0.5,
                                                                 GuidedAlignmentCost::ce),
                                           with_guided_alignment(Case{OutputKind::maxout, true, 0, 0, 0}, 0.5,
                                                                 GuidedAlignmentCost::mse),
                                           with_guided_alignment(Case{OutputKind::linear, true, 0.3, 0.2, 0.1, false,
                                                                      true, 1, 2},
                                                                 0.3, GuidedAlignmentCost::ce),
                                           with_guided_alignment(with_rnn_dropout(Case{OutputKind::maxout, true, 0.3, 0.2,
                                                                                       0.1, true, true, 2, 2, 2, true, 2, 2},
                                                                                  0.3),
                                                                 1.0, GuidedAlignmentCost::mse),
                                           // --alignment-output: guided alignment's cost on it instead, alone or
                                           // reaching the model; the conditional GRU with layers, and dropouts
                                           with_alignment_output(Case{OutputKind::maxout, true, 0, 0, 0}, 3, 0.5,
                                                                 GuidedAlignmentCost::ce, false),
                                           with_alignment_output(Case{OutputKind::maxout, true, 0, 0, 0}, 3, 0.5,
                                                                 GuidedAlignmentCost::ce, true),
                                           with_alignment_output(Case{OutputKind::linear, true, 0.3, 0.2, 0.1, false,
                                                                      true, 1, 2, 1, true, 2},
                                                                 4, 1.0, GuidedAlignmentCost::mse, true),
                                           with_alignment_output(Case{OutputKind::maxout, true, 0.3, 0.2, 0.1, false,
                                                                      false, 1, 2},
                                                                 2, 0.3, GuidedAlignmentCost::ce, false)));

// Word dropout zeroes whole rows of the mask, each with the probability given, and scales
// the others by 1/(1-p) on top of the units' mask.
TEST(WordDropout, ZeroesWholeRowsAtTheRate) {
  const Index rows = 20000, cols = 7;
  Mat<double> units(rows, cols), mask(rows, cols);
  draw_dropout_mask<double>(units, 0.2, 5);
  mask = units;
  std::vector<double> keep;
  drop_words<double>(mask, 0.3, 6, keep);
  ASSERT_EQ(keep.size(), static_cast<size_t>(rows));
  Index dropped = 0;
  for (Index r = 0; r < rows; ++r) {
    ASSERT_TRUE(keep[r] == 0 || std::abs(keep[r] - 1 / 0.7) < 1e-12) << keep[r];
    dropped += keep[r] == 0;
    for (Index k = 0; k < cols; ++k) ASSERT_EQ(mask(r, k), units(r, k) * keep[r]);
  }
  EXPECT_NEAR(static_cast<double>(dropped) / rows, 0.3, 0.015);  // 4.6 standard deviations
  Mat<double> ones(3, 2);
  draw_dropout_mask<double>(ones, 0.0, 5);
  EXPECT_TRUE((ones.array() == 1.0).all());
}

// In the model a dropped source token's x_j is zero; a dropped previous target word is zero
// both where it enters the decoder (E) and in the output layer's input (X's E part); kept
// tokens are the embedding scaled by 1/(1-p).
TEST(WordDropout, DropsEachTokenInEveryUse) {
  Parameters<double> params(config_of(Case{OutputKind::maxout, true, 0, 0, 0}));
  test::init_for_check(params, 0.5, 7);
  const Batch batch = tiny_batch(true);
  const Index B = batch.size, S = batch.src_len, n = params.config().hidden, e = params.config().emb;
  ModelWorkspace<double> ws;
  int dropped_src = 0, kept_src = 0, dropped_tgt = 0, kept_tgt = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    rnnsearch_forward<double>(params, batch, Regularization{0, 0, 0.5, 0.5, 0, 0, seed}, ws);
    for (Index r = 0; r < S * B; ++r) {
      const double factor = ws.encoder.word_keep[r];
      EXPECT_TRUE(factor == 0 || factor == 2.0) << factor;
      EXPECT_LT((ws.encoder.x.row(r) - factor * params.mat(src_emb).row(batch.src[r])).norm(), 1e-12);
      ++(factor == 0 ? dropped_src : kept_src);
    }
    for (size_t k = 0; k < ws.out_rows.size(); ++k) {
      const Index r = ws.out_rows[k];
      const auto embedding = params.mat(tgt_emb).row(ws.inputs[r]);
      const double factor = ws.word_keep[r];
      EXPECT_TRUE(factor == 0 || factor == 2.0) << factor;
      EXPECT_LT((ws.E.row(r) - factor * embedding).norm(), 1e-12);
      EXPECT_LT((ws.X.row(k).segment(n, e) - factor * embedding).norm(), 1e-12);
      ++(factor == 0 ? dropped_tgt : kept_tgt);
    }
  }
  // (the masks differ by seed and neither kind is always or never dropped)
  EXPECT_GT(dropped_src, 0);
  EXPECT_GT(kept_src, 0);
  EXPECT_GT(dropped_tgt, 0);
  EXPECT_GT(kept_tgt, 0);
}

// Recurrent dropout (--dropout-rnn) in the model: each GRU transition's recurrent products
// read its state through one mask per sentence, the same at every step and different for
// each transition, while the update (1 - z) ∘ h_prev + z ∘ h̃ uses the state itself; off
// in a forward pass without it, even after one with it.
TEST(RecurrentDropout, EachTransitionReadsItsStateThroughOneMaskAtEveryStep) {
  const Case c{OutputKind::maxout, true, 0, 0, 0, false, false, 2, 2, 2, true, 2};
  Parameters<double> params(config_of(c));
  test::init_for_check(params, 0.5, 7);
  const Batch batch = tiny_batch(true);
  const Index B = batch.size, S = batch.src_len, Tn = batch.tgt_len, n = params.config().hidden;
  ModelWorkspace<double> ws;
  const double plain = rnnsearch_forward<double>(params, batch, Regularization{}, ws);
  const double dropped = rnnsearch_forward<double>(params, batch, Regularization{0, 0, 0, 0, 0.5, 0, 11}, ws);
  EXPECT_GT(std::abs(dropped - plain), 1e-6);

  // every step of a GRU reads h̄ = h_prev ∘ m with one m; rows of padding included
  auto expect_one_mask = [&](const RecurrentDropoutBuffers<double>& d, const MatCRef<double>& h_prev_all, Index steps,
                             const char* name) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(d.on);
    EXPECT_TRUE(((d.mask.array() == 0) || (d.mask.array() == 2)).all());
    for (Index i = 0; i < steps; ++i)
      EXPECT_EQ(Mat<double>(step_rows(d.dropped, i, B)), Mat<double>(step_rows(h_prev_all, i, B).cwiseProduct(d.mask)));
  };
  const GruLayer<double>& fw = ws.encoder.fw[0];
  const GruLayer<double>& bw = ws.encoder.bw[0];
  expect_one_mask(fw.dropout, fw.states.topRows(S * B), S, "encoder forward, transition 1");
  expect_one_mask(bw.dropout, bw.states.middleRows(B, S * B), S, "encoder backward, transition 1");
  expect_one_mask(fw.deep[0].dropout, fw.deep[0].input, S, "encoder forward, transition 2");
  expect_one_mask(ws.encoder.fw[1].dropout, ws.encoder.fw[1].states.topRows(S * B), S, "encoder forward, layer 2");
  expect_one_mask(ws.dropout, ws.states.topRows(Tn * B), Tn, "decoder dec_U");
  expect_one_mask(ws.cells[0].dropout, ws.cells[0].input, Tn, "decoder cell 2");
  expect_one_mask(ws.layers[0].dropout, ws.layers[0].states.topRows(Tn * B), Tn, "decoder layer 2");
  const Mat<double>* masks[] = {&fw.dropout.mask,     &bw.dropout.mask,       &fw.deep[0].dropout.mask,
                                &ws.dropout.mask,     &ws.cells[0].dropout.mask, &ws.layers[0].dropout.mask};
  for (const Mat<double>* a : masks)
    for (const Mat<double>* b : masks) {
      if (a == b) continue;
      EXPECT_NE(*a, *b);
    }

  // the update of dec_U's GRU (s' = cell 2's input) from s_prev itself: s' = s_prev + z ∘ (h̃ - s_prev)
  for (Index i = 0; i < Tn; ++i)
    for (Index b = 0; b < B; ++b) {
      const Index r = i * B + b;
      const auto z = ws.gates.row(r).segment(n, n).array(), h_cand = ws.gates.row(r).tail(n).array();
      const auto s_prev = ws.states.row(r).array();
      const Eigen::ArrayXXd expected = s_prev + ws.moving[r] * z * (h_cand - s_prev);
      EXPECT_LT((ws.cells[0].input.row(r).array() - expected).abs().maxCoeff(), 1e-12);
    }

  // a forward pass without dropout after one with it is the plain model again
  EXPECT_EQ(rnnsearch_forward<double>(params, batch, Regularization{}, ws), plain);
  EXPECT_FALSE(ws.dropout.on || fw.dropout.on || ws.cells[0].dropout.on || ws.layers[0].dropout.on);
}

// Layer-level checks: a loss L = Σ w ∘ output with fixed random weights w, differentiated
// with respect to every input and parameter of the layer by central differences.
Mat<double> random_matrix(Index rows, Index cols, std::mt19937_64& rng, double scale = 1.0) {
  std::uniform_real_distribution<double> u(-scale, scale);
  Mat<double> m(rows, cols);
  for (Index i = 0; i < m.size(); ++i) m.data()[i] = u(rng);
  return m;
}

// Checks d loss / d m for every entry of m against analytic.
template <class Loss>
void expect_gradient(Mat<double>& m, const Mat<double>& analytic, Loss loss, const char* name) {
  double worst = 0;
  for (Index k = 0; k < m.size(); ++k)
    worst = std::max(worst, relative_error(analytic.data()[k], numeric_derivative(&m.data()[k], loss)));
  EXPECT_LT(worst, kMaxRelativeError) << name;
}

// Without and with layer normalization of the recurrent products (its gain and bias then
// get checked as well), and without and with recurrent dropout (h_prev reaches the
// products through a mask, and the update directly).
TEST(GruStepGradient, InputsStateAndWeights) {
  for (bool layer_norm : {false, true})
    for (bool rnn_dropout : {false, true}) {
      std::mt19937_64 rng(1);
      const Index B = 3, n = 4;
      Mat<double> g = random_matrix(B, 3 * n, rng), h_prev = random_matrix(B, n, rng),
                  U = random_matrix(n, 3 * n, rng), w = random_matrix(B, n, rng);
      Mat<double> gain = random_matrix(1, 3 * n, rng).array() + 1.0, bias = random_matrix(1, 3 * n, rng);
      const double moving[B] = {1, 0, 1};  // the middle row is padding
      Mat<double> gates(B, 3 * n), r_h(B, n), h(B, n), scratch(B, 3 * n), hat(B, 3 * n), inv_std(B, 2);
      Mat<double> dgain = Mat<double>::Zero(1, 3 * n), dbias = Mat<double>::Zero(1, 3 * n);
      auto norm = [&]() -> std::optional<NormedProduct<double>> {
        if (!layer_norm) return std::nullopt;
        return NormedProduct<double>{gain.data(), bias.data(), dgain.data(), dbias.data(), hat, inv_std};
      };
      Mat<double> mask(B, n), dropped(B, n);
      draw_dropout_mask<double>(mask, 0.5, 3);
      auto dropout = [&]() -> std::optional<RecurrentDropout<double>> {
        if (!rnn_dropout) return std::nullopt;
        return RecurrentDropout<double>{mask, dropped};
      };
      auto loss = [&] {
        gates = g;  // the forward writes the gates over g
        gru_step_forward<double>(h_prev, U, moving, {gates, r_h, norm(), dropout()}, scratch, h);
        return h.cwiseProduct(w).sum();
      };
      loss();
      Mat<double> dg = gates, dh_prev = Mat<double>::Zero(B, n), dU = Mat<double>::Zero(n, 3 * n);
      gru_step_backward<double>(w, h_prev, U, moving, dg, scratch, dh_prev, norm(), dropout());
      gru_accumulate_dU<double>(rnn_dropout ? dropped : h_prev, r_h, layer_norm ? hat : dg, dU);
      SCOPED_TRACE(std::string(layer_norm ? "layer normalization" : "plain") + (rnn_dropout ? ", recurrent dropout" : ""));
      if (rnn_dropout) {  // (the mask drops some units and keeps others)
        EXPECT_TRUE((mask.array() == 0).any() && (mask.array() == 2).any());
        EXPECT_EQ(dropped, h_prev.cwiseProduct(mask));
      }
      expect_gradient(g, dg, loss, "g");
      expect_gradient(h_prev, dh_prev, loss, "h_prev");
      expect_gradient(U, dU, loss, "U");
      if (layer_norm) {
        expect_gradient(gain, dgain, loss, "gain");
        expect_gradient(bias, dbias, loss, "bias");
      }
    }
}

// The normalisation itself: each block of each row has mean 0 and variance 1/(1 + ε/var)
// before γ and β, and what reads it gets γ ∘ x̂ + β + add, through σ or tanh when fused with
// the gates; out may be the product's own storage.
TEST(LayerNorm, NormalisesEachBlockOfEachRow) {
  std::mt19937_64 rng(4);
  const Index R = 3, n = 4;
  const Mat<double> P = random_matrix(R, 3 * n, rng, 3.0), gain = random_matrix(1, 3 * n, rng),
                    bias = random_matrix(1, 3 * n, rng), add = random_matrix(R, 3 * n, rng),
                    b = random_matrix(1, 3 * n, rng);
  Mat<double> hat(R, 3 * n), inv_std(R, 2);
  const NormedProduct<double> norm{gain.data(), bias.data(), nullptr, nullptr, hat, inv_std};
  Mat<double> y = P;  // LN(P) + b over P
  layer_norm_forward<double>(y, {b.data(), 0}, y, norm);
  Mat<double> gates(R, 3 * n);  // [σ | tanh](LN(P) + add)
  layer_norm_forward<double>(P.leftCols(2 * n), {add.data(), add.outerStride()}, Activation::sigmoid,
                             gates.leftCols(2 * n), norm, 0, 2 * n, 0);
  layer_norm_forward<double>(P.rightCols(n), {add.data() + 2 * n, add.outerStride()}, Activation::tanh,
                             gates.rightCols(n), norm, 2 * n, n, 1);
  for (Index r = 0; r < R; ++r)
    for (const auto& [begin, width] : {std::pair<Index, Index>{0, 2 * n}, {2 * n, n}}) {
      const Eigen::RowVectorXd v = P.row(r).segment(begin, width);
      const double mean = v.mean(), var = (v.array() - mean).square().mean();
      for (Index k = 0; k < width; ++k) {
        const Index c = begin + k;
        const double expected = (v(k) - mean) / std::sqrt(var + kLayerNormEpsilon);
        const double normed = gain(0, c) * expected + bias(0, c);
        EXPECT_NEAR(hat(r, c), expected, 1e-12);
        EXPECT_NEAR(y(r, c), normed + b(0, c), 1e-12);
        EXPECT_NEAR(gates(r, c), begin == 0 ? 1 / (1 + std::exp(-(normed + add(r, c)))) : std::tanh(normed + add(r, c)),
                    1e-12);
      }
    }
}

TEST(AttentionGradient, QueryKeysAnnotationsAndV) {
  std::mt19937_64 rng(2);
  const Index Bs = 2, S = 4, n = 3, R = 3;
  Mat<double> q = random_matrix(R, n, rng), keys = random_matrix(Bs * S, n, rng),
              annotations = random_matrix(Bs * S, 2 * n, rng), v = random_matrix(1, n, rng),
              w = random_matrix(R, 2 * n, rng);
  const int lengths[Bs] = {4, 2};
  const int row_sentence[R] = {0, 1, 1};  // two beam rows share sentence 1
  const AttentionMemory<double> memory{&annotations, &keys, S, lengths};
  Mat<double> alpha(R, S), context(R, 2 * n), scratch;
  // L = Σ w ∘ c + Σ w_α ∘ α: the output layer reads c, guided alignment's cost α itself
  const Mat<double> w_alpha = random_matrix(R, S, rng);
  auto loss = [&] {
    attention_forward<double>(q, memory, row_sentence, v.row(0), alpha, context, scratch);
    return context.cwiseProduct(w).sum() + alpha.cwiseProduct(w_alpha).sum();
  };
  loss();
  for (Index r = 0; r < R; ++r) EXPECT_NEAR(alpha.row(r).sum(), 1.0, 1e-12);
  EXPECT_EQ(alpha(1, 2), 0.0);  // padding of sentence 1
  Mat<double> dq(R, n), dkeys = Mat<double>::Zero(Bs * S, n), dann = Mat<double>::Zero(Bs * S, 2 * n);
  Mat<double> dv = Mat<double>::Zero(1, n);
  const MatCRef<double> dalpha = w_alpha;
  attention_backward<double>(w, &dalpha, q, memory, row_sentence, v.row(0), alpha, dq, dkeys, dann, dv.row(0), scratch);
  expect_gradient(q, dq, loss, "q");
  expect_gradient(keys, dkeys, loss, "keys");
  expect_gradient(annotations, dann, loss, "annotations");
  expect_gradient(v, dv, loss, "att_v");
}

// One decoder step's recurrence (q, attention, g, GRU; or the conditional GRU's cells around
// the attention) on beam-like rows: two rows share sentence 1 and one row is padding.
// L = Σ w_s ∘ s + Σ w_c ∘ c, since the output layer reads both.
class DecoderRecurrenceGradient : public ::testing::TestWithParam<std::tuple<bool, int>> {};  // LN, base depth

TEST_P(DecoderRecurrenceGradient, StateInputsMemoryAndWeights) {
  std::mt19937_64 rng(5);
  ModelConfig config = test::tiny_config(11, 11, OutputKind::maxout);
  const bool layer_norm = std::get<0>(GetParam());
  config.layer_norm = layer_norm;
  config.dec_cell_base_depth = std::get<1>(GetParam());
  Parameters<double> params(config);
  test::init_for_check(params, 0.5, 5);
  const Index Bs = 2, S = 4, R = 3, n = params.config().hidden;
  Mat<double> s_prev = random_matrix(R, n, rng), g_E = random_matrix(R, 3 * n, rng),
              keys = random_matrix(Bs * S, n, rng), annotations = random_matrix(Bs * S, 2 * n, rng),
              w_s = random_matrix(R, n, rng), w_c = random_matrix(R, 2 * n, rng);
  const int lengths[Bs] = {4, 2};
  const int row_sentence[R] = {0, 1, 1};
  const double moving[R] = {1, 0, 1};
  const AttentionMemory<double> memory{&annotations, &keys, S, lengths};
  Mat<double> queries(R, n), alpha(R, S), context(R, 2 * n), gates(R, 3 * n), r_h(R, n), s(R, n), gru_scratch,
      scratch;
  NormBuffers<double> C_norm, U_norm;
  for (NormBuffers<double>* norm : {&C_norm, &U_norm}) norm->size(R, 3 * n);
  std::vector<TransitionBuffers<double>> cells(config.dec_cell_base_depth - 1);
  for (TransitionBuffers<double>& cell : cells) cell.size(R, n, layer_norm);
  Parameters<double> grads(params.config());
  grads.set_zero();
  auto outputs = [&](Parameters<double>* norm_grads) -> DecoderRecurrenceOutputs<double> {
    return {queries, alpha, context,
            {gates, r_h, layer_norm_of<double>(params, dec_U, U_norm, 0, R, norm_grads)},
            s, layer_norm_of<double>(params, dec_C, C_norm, 0, R, norm_grads), &cells, 0};
  };
  auto loss = [&] {
    gates = g_E;  // the step writes g, then the gates, over g_E
    decoder_recurrence<double>(params, memory, row_sentence, moving, s_prev, gru_scratch, scratch, outputs(nullptr));
    return s.cwiseProduct(w_s).sum() + context.cwiseProduct(w_c).sum();
  };
  loss();
  Mat<double> dcontext = w_c, dqueries(R, n), ds_prev = Mat<double>::Zero(R, n);
  Mat<double> dkeys = Mat<double>::Zero(Bs * S, n), dannotations = Mat<double>::Zero(Bs * S, 2 * n);
  decoder_recurrence_backward<double>(params, memory, row_sentence, moving, s_prev, outputs(&grads), w_s,
                                      {dcontext, dqueries, ds_prev}, dkeys, dannotations, grads, gru_scratch, scratch);
  const Mat<double> dg = gates;  // the backward wrote d g over the gates (and each dP over its x̂)
  const bool conditional = config.conditional_decoder();
  const Mat<double> query_states = conditional ? cells[0].input : s_prev, dg_C = conditional ? cells[0].gates : dg;
  decoder_recurrence_weight_grads<double>(query_states, s_prev, r_h, context, layer_norm ? U_norm.hat : dg,
                                          layer_norm ? C_norm.hat : dg_C, dqueries, grads);
  for (int k = 2; k <= config.dec_cell_base_depth; ++k)
    transition_weight_grads<double>(cells[k - 2], R, layer_norm, grads.mat(dec_cell(config, k).U),
                                    grads.vec(dec_cell(config, k).b));
  expect_gradient(s_prev, ds_prev, loss, "s_prev");
  expect_gradient(g_E, dg, loss, "g_E");
  expect_gradient(keys, dkeys, loss, "keys");
  expect_gradient(annotations, dannotations, loss, "annotations");
  std::vector<Param> checked = {att_W, att_v, dec_C, dec_U};
  if (layer_norm) checked.insert(checked.end(), {dec_C_lns, dec_C_lnb, dec_U_lns, dec_U_lnb});
  for (int k = 2; k <= config.dec_cell_base_depth; ++k) {
    const Transition cell = dec_cell(config, k);
    checked.insert(checked.end(), {cell.U, cell.b});
    if (layer_norm) checked.insert(checked.end(), {params.norm(cell.U).gain, params.norm(cell.U).bias});
  }
  for (Param p : checked) {
    const ParamSpec& spec = params.spec(p);
    double worst = 0;
    for (size_t k = spec.offset; k < spec.offset + spec.size(); ++k)
      worst = std::max(worst, relative_error(grads.values()[k], numeric_derivative(&params.values()[k], loss)));
    EXPECT_LT(worst, kMaxRelativeError) << spec.name;
  }
}

INSTANTIATE_TEST_SUITE_P(LayerNormAndBaseDepth, DecoderRecurrenceGradient,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(1, 2, 3)));

TEST(OutputLayerGradient, InputsOfAllKindsWithAndWithoutLabelSmoothing) {
  for (const Case& model : kOutputLayers)
  for (double smoothing : {0.0, 0.1}) {
    std::mt19937_64 rng(3);
    Parameters<double> params(config_of(model));
    params.init_uniform(0.5, 3);
    const Index N = 4, din = params.config().output_input();
    Mat<double> X = random_matrix(N, din, rng);
    const int targets[N] = {3, 5, 0, 10};
    OutputCache<double> cache;
    Mat<double> logits(N, params.config().tgt_vocab);
    auto loss = [&] {
      output_forward<double>(params, X, cache, logits);
      return softmax_cross_entropy<double>(logits, targets, smoothing);
    };
    loss();
    softmax_cross_entropy_backward<double>(logits, targets, smoothing, 1.0);
    Parameters<double> grads(params.config());
    grads.set_zero();
    Mat<double> dX(N, din);
    output_backward<double>(params, X, cache, logits, grads, dX);
    expect_gradient(X, dX, loss, "X");
  }
}

// The smoothed cost is the cross-entropy against q = (1−ε) onehot(y) + ε/V, written out
// here term by term; token_nll keeps the unsmoothed −log p[y] that score and perplexity use.
TEST(LabelSmoothing, IsCrossEntropyAgainstTheSmoothedTarget) {
  std::mt19937_64 rng(6);
  const Index N = 3, V = 7;
  const double eps = 0.1;
  const Mat<double> logits = random_matrix(N, V, rng, 3.0);
  const int targets[N] = {0, 4, 6};
  double expected = 0;
  std::vector<double> expected_nll(N);
  for (Index i = 0; i < N; ++i) {
    const double log_sum = std::log(logits.row(i).array().exp().sum());
    for (Index k = 0; k < V; ++k) {
      const double q = (k == targets[i] ? 1 - eps : 0.0) + eps / V;
      expected -= q * (logits(i, k) - log_sum);
    }
    expected_nll[i] = log_sum - logits(i, targets[i]);
  }
  Mat<double> work = logits;
  std::vector<double> token_nll(N);
  EXPECT_NEAR(softmax_cross_entropy<double>(work, targets, eps, token_nll.data()), expected, 1e-12);
  for (Index i = 0; i < N; ++i) EXPECT_NEAR(token_nll[i], expected_nll[i], 1e-12);
}

// output_layer_cost works kOutputChunkRows rows at a time, the last chunk (88 rows here)
// padded with zero rows to a multiple of kOutputRowMultiple: across chunk boundaries and
// padding it must give exactly the cost, gradients and dX of the layer applied to all rows at
// once, also when dX is written over X (as training does).
TEST(OutputLayerCost, ChunkedEqualsAllRowsAtOnce) {
  for (OutputKind kind : {OutputKind::maxout, OutputKind::linear}) {
    std::mt19937_64 rng(4);
    Parameters<double> params(test::tiny_config(11, 11, kind));
    params.init_uniform(0.5, 4);
    const Index N = 2 * kOutputChunkRows + 88, din = params.config().output_input();
    const Mat<double> X = random_matrix(N, din, rng);
    std::vector<int> targets(N);
    for (Index i = 0; i < N; ++i) targets[i] = static_cast<int>(i % params.config().tgt_vocab);
    const double scale = 0.01;

    OutputCache<double> whole_cache;
    Mat<double> logits(N, params.config().tgt_vocab), whole_dX(N, din);
    output_forward<double>(params, X, whole_cache, logits);
    const double whole_cost = softmax_cross_entropy<double>(logits, targets.data(), 0.0);
    softmax_cross_entropy_backward<double>(logits, targets.data(), 0.0, scale);
    Parameters<double> whole_grads(params.config());
    whole_grads.set_zero();
    output_backward<double>(params, X, whole_cache, logits, whole_grads, whole_dX);

    OutputCache<double> cache;
    Mat<double> dX(N, din);
    std::vector<double> token_nll(N);
    Parameters<double> grads(params.config());
    grads.set_zero();
    const double cost =
        output_layer_cost<double>(params, X, targets.data(), 0.0, cache, token_nll.data(), scale, &grads, &dX);
    EXPECT_NEAR(cost, whole_cost, 1e-10 * whole_cost);
    double token_sum = 0;
    for (double v : token_nll) token_sum += v;
    EXPECT_NEAR(token_sum, whole_cost, 1e-10 * whole_cost);
    EXPECT_LT((dX - whole_dX).cwiseAbs().maxCoeff(), 1e-12);
    double max_diff = 0;
    for (size_t k = 0; k < grads.values().size(); ++k)
      max_diff = std::max(max_diff, std::abs(grads.values()[k] - whole_grads.values()[k]));
    EXPECT_LT(max_diff, 1e-12);

    // Training writes dX over X itself: the same gradients
    Mat<double> X_then_dX = X;
    OutputCache<double> in_place_cache;
    Parameters<double> in_place_grads(params.config());
    in_place_grads.set_zero();
    output_layer_cost<double>(params, X_then_dX, targets.data(), 0.0, in_place_cache, nullptr, scale,
                              &in_place_grads, &X_then_dX);
    EXPECT_LT((X_then_dX - whole_dX).cwiseAbs().maxCoeff(), 1e-12);
    max_diff = 0;
    for (size_t k = 0; k < grads.values().size(); ++k)
      max_diff = std::max(max_diff, std::abs(in_place_grads.values()[k] - whole_grads.values()[k]));
    EXPECT_LT(max_diff, 1e-12);
  }
}

// The float model (what training uses) computes the same cost and gradient as the double one.
TEST(FloatPrecision, AgreesWithDouble) {
  for (bool layer_norm : {false, true}) {
    SCOPED_TRACE(layer_norm ? "layer normalization, encoder cell depth 2, decoder base depth 2" : "plain");
    ModelConfig config = test::tiny_config(11, 11, OutputKind::maxout);
    config.layer_norm = layer_norm;
    config.enc_cell_depth = layer_norm ? 2 : 1;
    config.dec_cell_base_depth = layer_norm ? 2 : 1;
    Parameters<double> pd(config);
    test::init_for_check(pd, 0.5, 11);
    Parameters<float> pf(pd.config());
    for (size_t k = 0; k < pd.values().size(); ++k) pf.values()[k] = static_cast<float>(pd.values()[k]);
    const Batch batch = tiny_batch(true);
    ModelWorkspace<double> wd;
    ModelWorkspace<float> wf;
    Parameters<double> gd(pd.config());
    Parameters<float> gf(pf.config());
    gd.set_zero();
    gf.set_zero();
    const double cost_d = rnnsearch_forward_backward<double>(pd, batch, {}, 1.0, wd, gd);
    const float cost_f = rnnsearch_forward_backward<float>(pf, batch, {}, 1.0f, wf, gf);
    EXPECT_NEAR(cost_f, cost_d, 1e-5 * std::abs(cost_d));
    double max_diff = 0, max_grad = 0;
    for (size_t k = 0; k < gd.values().size(); ++k) {
      max_diff = std::max(max_diff, std::abs(gd.values()[k] - gf.values()[k]));
      max_grad = std::max(max_grad, std::abs(gd.values()[k]));
    }
    EXPECT_LT(max_diff, 1e-5 * max_grad);
  }
}

// ---------------------------------------------------------------------------------------
// A plain implementation of docs/design.md §1 for one sentence at a time, written from the
// equations with vectors and loops (no batching, no masks, no caches), to check the batched
// forward against.
using Vec = Eigen::VectorXd;

Vec row_times(const Vec& x, const ConstMatMap<double>& W) {  // x W for a row vector x
  Vec y = Vec::Zero(W.cols());
  for (Index i = 0; i < W.rows(); ++i)
    for (Index k = 0; k < W.cols(); ++k) y(k) += x(i) * W(i, k);
  return y;
}
Vec vec_of(const ConstRowVecMap<double>& b) { return b.transpose(); }
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// The product P = x M as it enters the gates: LN_M(P) with layer normalization (§1.2), else P.
Vec normed(const Vec& P, const Parameters<double>& p, Param M) {
  if (!p.config().layer_norm) return P;
  const NormParams norm = p.norm(M);
  const Index n = P.size() / 3;
  Vec y(P.size());
  for (const auto& [begin, width] : {std::pair<Index, Index>{0, 2 * n}, {2 * n, n}}) {
    double mean = 0, var = 0;
    for (Index k = begin; k < begin + width; ++k) mean += P(k) / double(width);
    for (Index k = begin; k < begin + width; ++k) var += (P(k) - mean) * (P(k) - mean) / double(width);
    for (Index k = begin; k < begin + width; ++k)
      y(k) = p.vec(norm.gain)(k) * (P(k) - mean) / std::sqrt(var + 1e-5) + p.vec(norm.bias)(k);
  }
  return y;
}

// h = GRU(a, h_prev; U) where a = x W + b (+ c C) are the input-side pre-activations.
Vec gru_reference(const Vec& a, const Vec& h, const Parameters<double>& p, Param U) {
  const Index n = h.size();
  Vec hU = normed(row_times(h, p.mat(U)), p, U), h_new(n);
  Vec r(n), z(n);
  for (Index k = 0; k < n; ++k) {
    r(k) = sigmoid(a(k) + hU(k));
    z(k) = sigmoid(a(n + k) + hU(n + k));
  }
  Vec rh = r.cwiseProduct(h), rhU = normed(row_times(rh, p.mat(U)), p, U);
  for (Index k = 0; k < n; ++k) {
    const double cand = std::tanh(a(2 * n + k) + rhU(2 * n + k));
    h_new(k) = (1 - z(k)) * h(k) + z(k) * cand;
  }
  return h_new;
}

double sentence_cost_reference(const Parameters<double>& p, const std::vector<int>& src,
                               const std::vector<int>& tgt) {
  const ModelConfig& c = p.config();
  const Index n = c.hidden, S = static_cast<Index>(src.size());
  auto emb = [&](Param table, int id) { return Vec(p.mat(table).row(id).transpose()); };
  std::vector<Vec> fw(S), bw(S), ann(S);
  // one step of encoder layer l: transition 1 reads the input, transitions 2..N only the state (§1.3)
  auto encoder_step = [&](bool backward, int l, const Vec& input, const Vec& h_prev) {
    const GruLayerParams layer = enc_layer(c, backward, l);
    Vec h = gru_reference(normed(row_times(input, p.mat(layer.W)), p, layer.W) + vec_of(p.vec(layer.b)), h_prev, p,
                          layer.U);
    for (int k = 2; k <= c.enc_cell_depth; ++k) {
      const Transition t = enc_transition(c, backward, k, l);
      h = gru_reference(vec_of(p.vec(t.b)), h, p, t.U);
    }
    return h;
  };
  // each direction: layer 1 over the embeddings, layer l over layer l−1's outputs (+ input with --skip)
  for (bool backward : {false, true}) {
    std::vector<Vec> inputs(S);
    for (Index j = 0; j < S; ++j) inputs[j] = emb(src_emb, src[j]);
    for (int l = 1; l <= c.enc_depth; ++l) {
      std::vector<Vec> outputs(S);
      Vec h = Vec::Zero(n);
      // --enc-type alternating: layers 2, 4, … read against their stack's direction
      const bool reverse = backward != (c.enc_type == EncoderType::alternating && l % 2 == 0);
      for (Index k = 0; k < S; ++k) {
        const Index j = reverse ? S - 1 - k : k;
        h = encoder_step(backward, l, inputs[j], h);
        outputs[j] = c.skip && l > 1 ? Vec(h + inputs[j]) : h;
      }
      inputs = outputs;
    }
    (backward ? bw : fw) = inputs;
  }
  Vec mean = Vec::Zero(2 * n);
  for (Index j = 0; j < S; ++j) {
    ann[j].resize(2 * n);
    ann[j] << fw[j], bw[j];
    mean += ann[j] / double(S);
  }
  Vec s = (row_times(mean, p.mat(init_W)) + vec_of(p.vec(init_b))).array().tanh();
  std::vector<Vec> high(c.dec_depth - 1, s);  // --dec-depth: layers 2..D's states, from s_0 (§1.4)
  double cost = 0;
  int y_prev = Vocab::kBos;
  for (int y : tgt) {
    const Vec E = emb(tgt_emb, y_prev);
    // the conditional GRU (§1.4) first moves the state with E alone and queries from there
    const bool conditional = c.dec_cell_base_depth > 1;
    const Vec g_E = normed(row_times(E, p.mat(dec_W)), p, dec_W) + vec_of(p.vec(dec_b));
    const Vec s_mid = conditional ? gru_reference(g_E, s, p, dec_U) : s;
    const Vec q = row_times(s_mid, p.mat(att_W));
    std::vector<double> score(S);
    double max_score = -1e300, total = 0;
    for (Index j = 0; j < S; ++j) {
      const Vec K = row_times(ann[j], p.mat(att_U)) + vec_of(p.vec(att_b));
      score[j] = vec_of(p.vec(att_v)).dot(Vec((q + K).array().tanh()));
      max_score = std::max(max_score, score[j]);
    }
    for (double& sc : score) total += sc = std::exp(sc - max_score);
    Vec ctx = Vec::Zero(2 * n);
    for (Index j = 0; j < S; ++j) ctx += score[j] / total * ann[j];
    Vec s_new;
    if (conditional) {
      const Transition cell2 = dec_cell(c, 2);
      s_new = gru_reference(normed(row_times(ctx, p.mat(dec_C)), p, dec_C) + vec_of(p.vec(cell2.b)), s_mid, p,
                            cell2.U);
      for (int k = 3; k <= c.dec_cell_base_depth; ++k)
        s_new = gru_reference(vec_of(p.vec(dec_cell(c, k).b)), s_new, p, dec_cell(c, k).U);
    } else {
      s_new = gru_reference(g_E + normed(row_times(ctx, p.mat(dec_C)), p, dec_C), s, p, dec_U);
    }
    // layer l ≥ 2 reads the output of the layer below, o¹ = s (plus it, with --skip)
    Vec o = s_new;
    for (int l = 2; l <= c.dec_depth; ++l) {
      const GruLayerParams layer = dec_layer(c, l);
      Vec h = gru_reference(normed(row_times(o, p.mat(layer.W)), p, layer.W) + vec_of(p.vec(layer.b)), high[l - 2], p,
                            layer.U);
      for (int k = 2; k <= c.dec_cell_high_depth; ++k)
        h = gru_reference(vec_of(p.vec(layer.transition(k).b)), h, p, layer.transition(k).U);
      high[l - 2] = h;
      o = c.skip ? Vec(h + o) : h;
    }
    Vec X(c.output_input());
    X << (c.output == OutputKind::maxout && !conditional ? s : o), E, ctx;
    Vec logits;
    if (c.output == OutputKind::maxout) {
      const Vec pre = row_times(X, p.mat(out_W)) + vec_of(p.vec(out_b));
      Vec t(c.maxout);
      for (Index k = 0; k < c.maxout; ++k) t(k) = std::max(pre(2 * k), pre(2 * k + 1));
      logits = (c.tied_embeddings ? Vec(p.mat(tgt_emb) * t) : row_times(t, p.mat(out_Wo))) + vec_of(p.vec(out_bo));
    } else {
      logits = row_times(X, p.mat(out_W)) + vec_of(p.vec(out_b));
    }
    double log_sum = 0;
    for (Index k = 0; k < logits.size(); ++k) log_sum += std::exp(logits(k));
    cost += std::log(log_sum) - logits(y);
    s = s_new;
    y_prev = y;
  }
  return cost;
}

TEST(BatchedForward, EqualsSentenceBySentenceLoop) {
  for (Case model : kOutputLayers)
  for (bool layer_norm : {false, true})
  for (const auto& [cell_depth, dec_depth, layers, dec_layers, alternating] :
       {std::tuple{1, 1, 1, 1, false}, {3, 1, 1, 1, false}, {1, 2, 1, 1, false}, {2, 3, 1, 1, false},
        {1, 1, 3, 1, false}, {2, 2, 2, 1, false}, {1, 2, 1, 2, false}, {2, 2, 2, 3, false}, {1, 1, 3, 1, true},
        {1, 1, 2, 1, true}, {2, 2, 2, 3, true}}) {
    model.layer_norm = layer_norm;
    model.enc_cell_depth = cell_depth;
    model.dec_cell_base_depth = dec_depth;
    model.enc_depth = layers;
    model.dec_depth = dec_layers;
    model.dec_cell_high_depth = dec_layers == 3 ? 2 : 1;
    model.skip = layers == 3 || dec_layers == 3;
    model.enc_type = alternating ? EncoderType::alternating : EncoderType::bidirectional;
    SCOPED_TRACE((layer_norm ? "layer normalization" : "plain") + std::string(", encoder cell depth ") +
                 std::to_string(cell_depth) + ", decoder base depth " + std::to_string(dec_depth) + ", encoder layers " +
                 std::to_string(layers) + ", decoder layers " + std::to_string(dec_layers) +
                 (model.skip ? " with skip" : "") + (alternating ? ", alternating" : ""));
    Parameters<double> params(config_of(model));
    test::init_for_check(params, 0.5, 5);
    const std::vector<std::vector<int>> src = {{4, 5, 6, 7, 3}, {8, 3}, {9, 10, 4, 3}};
    const std::vector<std::vector<int>> tgt = {{5, 6, 3}, {7, 8, 9, 10, 4, 3}, {6, 3}};
    double expected = 0;
    std::vector<double> per_sentence(src.size());
    for (size_t k = 0; k < src.size(); ++k) expected += per_sentence[k] = sentence_cost_reference(params, src[k], tgt[k]);
    ModelWorkspace<double> ws;
    const double batched = rnnsearch_forward<double>(params, pad_batch(src, tgt, {0, 1, 2}), {}, ws);
    EXPECT_NEAR(batched, expected, 1e-10 * expected) << output_kind_name(model.output) << " tied " << model.tied_embeddings;
    // The per-token costs (what `rnnsearch score` reports) add up to each sentence's cost.
    std::vector<double> from_tokens(src.size(), 0.0);
    for (size_t k = 0; k < ws.out_rows.size(); ++k) from_tokens[ws.out_rows[k] % src.size()] += ws.token_nll[k];
    for (size_t b = 0; b < src.size(); ++b) EXPECT_NEAR(from_tokens[b], per_sentence[b], 1e-10 * per_sentence[b]);
  }
}

// The plain tiny model, and a deep layer-normalized one with tied embeddings (every kind of
// tensor a backward pass adds into), for ShardedModel's tests.
std::vector<ModelConfig> sharded_test_configs() {
  ModelConfig deep = test::tiny_config(24, 24, OutputKind::maxout, 4, 5, 4);
  deep.tied_embeddings = deep.layer_norm = deep.skip = true;
  deep.enc_cell_depth = deep.dec_cell_base_depth = deep.enc_depth = deep.dec_depth = deep.dec_cell_high_depth = 2;
  return {test::tiny_config(20, 24), deep};
}

// `pairs` random pairs of 3..8 tokens (source ids < 20, target < 24), each ending in </s>.
ParallelCorpus random_corpus(int pairs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  ParallelCorpus corpus;
  for (int pair = 0; pair < pairs; ++pair) {
    std::vector<int> src(3 + rng() % 6), tgt(3 + rng() % 6);
    for (int& id : src) id = 4 + static_cast<int>(rng() % 16);
    for (int& id : tgt) id = 4 + static_cast<int>(rng() % 20);
    src.back() = tgt.back() = Vocab::kEos;
    corpus.src.push_back(src);
    corpus.tgt.push_back(tgt);
  }
  return corpus;
}

// An update of two batches (--accumulate 2): each shard adds its batches into its own buffer,
// zeroed before the shard's first batch of the update even where that is not the update's
// first (shard 2 has no pair in a batch of 2 pairs), and the shards are added once. After an
// update that left every buffer holding a gradient, 3 threads give 1 thread's gradient, tensor
// by tensor (to rounding: other sums in another order), with the small batch first or last;
// and it is the sum of the two batches' gradients taken alone. The plain model, and a deep
// layer-normalized one with tied embeddings (every kind of tensor a backward pass adds into).
TEST(ShardedGradient, BatchesOfAnUpdateAddUpInEachShard) {
  for (const ModelConfig& config : sharded_test_configs()) {
    Parameters<float> params(config);
    test::init_for_check(params, 0.3, 5);
    const ParallelCorpus corpus = random_corpus(8, 5);
    const std::vector<uint32_t> small = {0, 1}, large = {2, 3, 4, 5, 6};
    const float scale = 1.0f / static_cast<float>(ShardedModel::target_tokens(corpus, small) +
                                                  ShardedModel::target_tokens(corpus, large));
    // The gradient of one update of these batches, in this order.
    auto update = [&](ShardedModel& model, const std::vector<std::vector<uint32_t>>& batches) {
      Parameters<float> grads(config);
      for (const auto& batch : batches) model.add_gradient(params, corpus, batch, {}, scale, grads);
      model.sum_gradients(grads);
      return grads;
    };
    ShardedModel three(config, 3), one(config, 1);
    update(three, {{0, 1, 2, 3, 4, 5, 6, 7}});  // every shard's buffer used
    const Parameters<float> want = update(one, {small, large});
    const Parameters<float> alone_small = update(one, {small}), alone_large = update(one, {large});
    for (const auto& order : {std::vector<std::vector<uint32_t>>{small, large}, {large, small}}) {
      const Parameters<float> got = update(three, order);
      // Per tensor a gradient can be a sum of nearly cancelling terms (the attention's, the
      // recurrences'), which another order of addition moves by up to ~1e-4 here; a batch or
      // a shard lost, doubled or stale moves it by far more than 1e-3.
      for (int p = 0; p < params.tensor_count(); ++p) {
        const Param param = static_cast<Param>(p);
        if (!params.spec(param).present) continue;
        const Mat<float> w = want.mat(param);
        ASSERT_GT(w.norm(), 0) << params.spec(param).name;
        EXPECT_LT((got.mat(param) - w).norm() / w.norm(), 1e-3) << params.spec(param).name;
        const Mat<float> sum = alone_small.mat(param) + alone_large.mat(param);
        EXPECT_LT((sum - w).norm() / w.norm(), 1e-3) << params.spec(param).name;
      }
    }
    const auto all = [](const Parameters<float>& g) { return ConstMatMap<float>(g.values().data(), 1, static_cast<Index>(g.values().size())); };
    EXPECT_GT(all(alone_small).norm(), 0.1 * all(want).norm());  // both batches weigh
    EXPECT_GT(all(alone_large).norm(), 0.1 * all(want).norm());
  }
}

// when_output_layer_done (what an MPI job over the ring exchanges during the backward pass):
// on the update's last batch the output layer's span is handed out once, already holding the
// update's whole gradient of every shard (also of shard 2, which only ran the first batch), and
// sum_gradients adds the rest around it: the update's gradient is the same to the bit as
// without it. The plain model and a deep one with tied embeddings (whose projection's gradient
// goes to tgt_emb, outside the span, and is added after the decoder's).
TEST(ShardedGradient, OutputLayerHandedOutEarlyIsFinal) {
  for (const ModelConfig& config : sharded_test_configs()) {
    Parameters<float> params(config);
    test::init_for_check(params, 0.3, 6);
    const ParallelCorpus corpus = random_corpus(7, 6);
    const std::vector<std::vector<uint32_t>> batches = {{0, 1, 2, 3, 4}, {5, 6}};
    const float scale = 1.0f / static_cast<float>(ShardedModel::target_tokens(corpus, batches[0]) +
                                                  ShardedModel::target_tokens(corpus, batches[1]));
    const FlatRange span = output_layer_span(config);
    ASSERT_LT(span.first, span.last);
    ShardedModel model(config, 3);
    auto update = [&](bool early, std::vector<float>* handed) {
      Parameters<float> grads(config);
      int calls = 0;
      for (size_t b = 0; b < batches.size(); ++b) {
        if (early && b + 1 == batches.size())
          model.when_output_layer_done([&](FlatRange given) {
            ++calls;
            EXPECT_EQ(given.first, span.first);
            EXPECT_EQ(given.last, span.last);
            handed->assign(grads.values().begin() + given.first, grads.values().begin() + given.last);
          });
        model.add_gradient(params, corpus, batches[b], {}, scale, grads);
      }
      model.sum_gradients(grads);
      EXPECT_EQ(calls, early ? 1 : 0);
      return grads;
    };
    std::vector<float> handed;
    const Parameters<float> want = update(false, nullptr), got = update(true, &handed);
    const auto bits = [](const float* values, size_t n) { return std::vector<float>(values, values + n); };
    EXPECT_EQ(bits(got.values().data(), got.values().size()), bits(want.values().data(), want.values().size()));
    EXPECT_EQ(handed, bits(want.values().data() + span.first, span.last - span.first));
    EXPECT_NE(handed, std::vector<float>(handed.size(), 0.f));
  }
}

}  // namespace
}  // namespace rnnsearch
