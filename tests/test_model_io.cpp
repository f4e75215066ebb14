// Model directory I/O: weights round trip with docs/design.md's names and shapes, and refusal
// (with the file and the problem named) of weights that do not match config.json.
#include <gtest/gtest.h>

#include <limits>

#include "rnnsearch/error.h"
#include "rnnsearch/io/npz.h"
#include "rnnsearch/model/model_io.h"
#include "support/error_of.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace rnnsearch {
namespace {

// Vocabularies of 9 and 7, e=3, n=4, l=2: the shapes below are written out for these sizes.
ModelConfig small_config(OutputKind output = OutputKind::maxout) {
  return test::tiny_config(9, 7, output, /*emb=*/3, /*hidden=*/4, /*maxout=*/2);
}

TEST(Weights, ArraysHaveTheDesignNamesAndShapes) {
  test::TempDir dir;
  Parameters<float> params(small_config());
  params.init_uniform(0.1, 1);
  save_weights(dir.path("model.npz"), params);
  const auto arrays = load_npz(dir.path("model.npz"));
  const std::map<std::string, std::vector<long>> expected = {
      {"src_emb", {9, 3}},  {"tgt_emb", {7, 3}},  {"enc_fw_W", {3, 12}}, {"enc_fw_U", {4, 12}}, {"enc_fw_b", {12}},
      {"enc_bw_W", {3, 12}}, {"enc_bw_U", {4, 12}}, {"enc_bw_b", {12}},  {"init_W", {8, 4}},    {"init_b", {4}},
      {"att_U", {8, 4}},    {"att_b", {4}},       {"att_W", {4, 4}},    {"att_v", {4}},       {"dec_W", {3, 12}},
      {"dec_b", {12}},      {"dec_C", {8, 12}},   {"dec_U", {4, 12}},   {"out_W", {15, 4}},   {"out_b", {4}},
      {"out_Wo", {2, 7}},   {"out_bo", {7}}};
  ASSERT_EQ(arrays.size(), expected.size());
  for (const auto& [name, shape] : expected) EXPECT_EQ(arrays.at(name).shape, shape) << name;
}

// The MPI ranks of one host keep the weights in memory they share (use_storage): the views
// write there, a copy owns its values, a move keeps where they are.
TEST(Weights, ParametersOverStorageTheyDoNotOwn) {
  Parameters<float> params(small_config());
  params.init_uniform(0.1, 3);
  AlignedVector<float> storage(params.values().begin(), params.values().end());
  const Parameters<float> copy_before = params;
  params.use_storage(storage.data());
  EXPECT_EQ(params.values().data(), storage.data());
  EXPECT_EQ(params.values(), copy_before.values());
  params.mat(att_W)(1, 2) = 5;
  EXPECT_EQ(storage[params.spec(att_W).offset + 1 * 4 + 2], 5);
  Parameters<float> copy = params;  // owns its values
  EXPECT_NE(copy.values().data(), storage.data());
  copy.mat(att_W)(1, 2) = 6;
  EXPECT_EQ(params.mat(att_W)(1, 2), 5);
  Parameters<float> moved = std::move(params);
  EXPECT_EQ(moved.values().data(), storage.data());
  const Parameters<float> view(small_config(), storage.data());
  EXPECT_EQ(view.vec(att_v).data(), storage.data() + view.spec(att_v).offset);
  EXPECT_EQ(view.values().size(), copy_before.values().size());
}

TEST(Weights, RoundTrip) {
  test::TempDir dir;
  Parameters<float> params(small_config(OutputKind::linear));
  params.init_uniform(0.1, 2);
  save_weights(dir.path("model.npz"), params);
  Parameters<float> loaded(small_config(OutputKind::linear));
  load_weights(dir.path("model.npz"), loaded);
  EXPECT_EQ(loaded.values(), params.values());
}

// A tied model stores no out_Wo (the output projection is tgt_embᵀ); config.json says so, and
// sizes that cannot be tied are refused.
TEST(Weights, TiedEmbeddingsStoreNoOutputProjection) {
  test::TempDir dir;
  ModelConfig config = test::tiny_config(9, 7, OutputKind::maxout, /*emb=*/3, /*hidden=*/4, /*maxout=*/3);
  config.tied_embeddings = true;
  Parameters<float> params(config);
  params.init_uniform(0.1, 2);
  save_weights(dir.path("model.npz"), params);
  const auto arrays = load_npz(dir.path("model.npz"));
  EXPECT_EQ(arrays.count("out_Wo"), 0u);
  EXPECT_EQ(arrays.at("out_bo").shape, (std::vector<long>{7}));
  const ModelConfig read_back = nlohmann::json(config).get<ModelConfig>();
  EXPECT_TRUE(read_back.tied_embeddings);
  Parameters<float> loaded(read_back);
  load_weights(dir.path("model.npz"), loaded);
  EXPECT_EQ(loaded.values(), params.values());
  // the untied model of the same sizes needs out_Wo, which this file does not have
  Parameters<float> untied(test::tiny_config(9, 7, OutputKind::maxout, 3, 4, 3));
  EXPECT_NE(test::error_of([&] { load_weights(dir.path("model.npz"), untied); }).find("out_Wo"), std::string::npos);

  nlohmann::json unequal = nlohmann::json(config);
  unequal["maxout"] = 2;
  EXPECT_NE(test::error_of([&] { unequal.get<ModelConfig>(); }).find("tied"), std::string::npos);
  nlohmann::json linear = nlohmann::json(config);
  linear["output_layer"] = "linear";
  EXPECT_NE(test::error_of([&] { linear.get<ModelConfig>(); }).find("tied"), std::string::npos);
}

// A layer-normalized model stores a gain (_lns, starting at 1) and a bias (_lnb, at 0) of 3n
// for each of the seven products after the other arrays; config.json says so, a model
// without the key (every model from before the option) has none, and the two kinds of
// weights do not load into each other.
TEST(Weights, LayerNormalizationAddsAGainAndABiasPerProduct) {
  test::TempDir dir;
  ModelConfig config = small_config();
  nlohmann::json plain_json = nlohmann::json(config);
  EXPECT_EQ(plain_json.count("layer_normalization"), 0u);
  const size_t plain_count = parameter_count(config);
  config.layer_norm = true;
  EXPECT_EQ(parameter_count(config), plain_count + 14 * 12);
  Parameters<float> params(config);
  params.init_uniform(0.1, 2);
  save_weights(dir.path("model.npz"), params);
  const auto arrays = load_npz(dir.path("model.npz"));
  EXPECT_EQ(arrays.size(), 22u + 14u);
  for (const char* product : {"enc_fw_W", "enc_fw_U", "enc_bw_W", "enc_bw_U", "dec_W", "dec_C", "dec_U"}) {
    const auto& gain = arrays.at(std::string(product) + "_lns");
    const auto& bias = arrays.at(std::string(product) + "_lnb");
    EXPECT_EQ(gain.shape, (std::vector<long>{12})) << product;
    EXPECT_EQ(gain.data, std::vector<float>(12, 1.0f)) << product;
    EXPECT_EQ(bias.data, std::vector<float>(12, 0.0f)) << product;
  }
  // The uniform draw of the other tensors is the plain model's: the norms come last.
  Parameters<float> plain(small_config());
  plain.init_uniform(0.1, 2);
  EXPECT_TRUE(std::equal(plain.values().begin(), plain.values().end(), params.values().begin()));

  const ModelConfig read_back = nlohmann::json(config).get<ModelConfig>();
  EXPECT_TRUE(read_back.layer_norm);
  EXPECT_FALSE(plain_json.get<ModelConfig>().layer_norm);
  Parameters<float> loaded(read_back);
  load_weights(dir.path("model.npz"), loaded);
  EXPECT_EQ(loaded.values(), params.values());
  const std::string extra = test::error_of([&] { load_weights(dir.path("model.npz"), plain); });
  EXPECT_NE(extra.find("_ln"), std::string::npos) << extra;
  save_weights(dir.path("plain.npz"), plain);
  EXPECT_NE(test::error_of([&] { load_weights(dir.path("plain.npz"), loaded); }).find("enc_fw_W_lns' is missing"),
            std::string::npos);
}

// --enc-cell-depth N adds, after everything else, U (n×3n) and b (3n) for transitions 2..N of
// each direction (with layer normalization U's gain and bias too); config.json says so only
// when N > 1, a depth outside 1..16 is refused, and a shallower model's weights do not load.
TEST(Weights, DeepTransitionAddsAUAndABPerTransition) {
  test::TempDir dir;
  ModelConfig config = small_config();
  const size_t plain_count = parameter_count(config);
  EXPECT_EQ(nlohmann::json(config).count("enc_cell_depth"), 0u);
  config.enc_cell_depth = 3;
  config.layer_norm = true;
  EXPECT_EQ(parameter_count(config), plain_count + 14 * 12 + 2 * 2 * (4 * 12 + 12 + 2 * 12));
  Parameters<float> params(config);
  params.init_uniform(0.1, 2);
  save_weights(dir.path("model.npz"), params);
  const auto arrays = load_npz(dir.path("model.npz"));
  EXPECT_EQ(arrays.size(), 22u + 14u + 2 * 2 * 4);
  for (const char* direction : {"enc_fw", "enc_bw"})
    for (const char* cell : {"_cell2", "_cell3"}) {
      const std::string name = std::string(direction) + cell;
      EXPECT_EQ(arrays.at(name + "_U").shape, (std::vector<long>{4, 12})) << name;
      EXPECT_EQ(arrays.at(name + "_b").shape, (std::vector<long>{12})) << name;
      EXPECT_EQ(arrays.at(name + "_U_lns").data, std::vector<float>(12, 1.0f)) << name;
      EXPECT_EQ(arrays.at(name + "_U_lnb").data, std::vector<float>(12, 0.0f)) << name;
    }
  EXPECT_EQ(params.spec(enc_transition(config, true, 3).U).name, "enc_bw_cell3_U");
  EXPECT_EQ(params.spec(enc_transition(config, false, 2).b).name, "enc_fw_cell2_b");
  // The shallow model's uniform draw is a prefix of the deep one's: the transitions come last.
  config.enc_cell_depth = 1;
  Parameters<float> shallow(config);
  shallow.init_uniform(0.1, 2);
  EXPECT_TRUE(std::equal(shallow.values().begin(), shallow.values().end(), params.values().begin()));

  config.enc_cell_depth = 3;
  const nlohmann::json json = config;
  EXPECT_EQ(json.at("enc_cell_depth"), 3);
  Parameters<float> loaded(json.get<ModelConfig>());
  load_weights(dir.path("model.npz"), loaded);
  EXPECT_EQ(loaded.values(), params.values());
  EXPECT_NE(test::error_of([&] { load_weights(dir.path("model.npz"), shallow); }).find("_cell"), std::string::npos);
  for (const char* key : {"enc_cell_depth", "dec_cell_base_depth", "enc_depth", "dec_depth", "dec_cell_high_depth"})
    for (int bad : {0, 17}) {
      nlohmann::json wrong = json;
      wrong[key] = bad;
      const std::string message = test::error_of([&] { wrong.get<ModelConfig>(); });
      EXPECT_NE(message.find(std::string("\"") + key + "\" must be a whole number in [1, 16]"), std::string::npos)
          << message;
    }
}

// --dec-cell-base-depth B adds dec_cellk_U and dec_cellk_b for cells 2..B after the encoder's
// transitions (cell 2 reads c dec_C, so dec_C keeps its place and shape).
TEST(Weights, ConditionalDecoderAddsItsCellsLast) {
  ModelConfig config = small_config();
  config.enc_cell_depth = 2;
  const size_t encoder_only = parameter_count(config);
  EXPECT_EQ(nlohmann::json(config).count("dec_cell_base_depth"), 0u);
  config.dec_cell_base_depth = 3;
  EXPECT_EQ(parameter_count(config), encoder_only + 2 * (4 * 12 + 12));
  Parameters<float> params(config);
  EXPECT_EQ(params.spec(dec_cell(config, 2).U).name, "dec_cell2_U");
  EXPECT_EQ(params.spec(dec_cell(config, 3).b).name, "dec_cell3_b");
  EXPECT_EQ(params.spec(dec_cell(config, 3).b).offset + 12, params.values().size());
  EXPECT_EQ(nlohmann::json(config).get<ModelConfig>().dec_cell_base_depth, 3);
}

// --enc-depth L adds, after the decoder's cells, layers 2..L of each direction: W, U, b, the
// norms of W and U, and the layer's own transitions; --skip adds nothing.
TEST(Weights, StackedEncoderLayersComeLast) {
  ModelConfig config = small_config();
  config.enc_cell_depth = 2;
  config.dec_cell_base_depth = 2;
  config.layer_norm = true;
  const size_t shallow = parameter_count(config);
  config.enc_depth = 3;
  config.skip = true;
  const size_t per_layer = (4 * 12) * 2 + 12 + 4 * 12 + (4 * 12 + 12 + 2 * 12);  // W U b, 4 norms, a transition
  EXPECT_EQ(parameter_count(config), shallow + 2 * 2 * per_layer);
  Parameters<float> params(config);
  EXPECT_EQ(params.spec(enc_layer(config, false, 2).W).name, "enc_fw_l2_W");
  EXPECT_EQ(params.spec(enc_layer(config, true, 3).b).name, "enc_bw_l3_b");
  EXPECT_EQ(params.spec(enc_transition(config, true, 2, 3).U).name, "enc_bw_l3_cell2_U");
  EXPECT_EQ(params.spec(params.norm(enc_layer(config, false, 2).U).gain).name, "enc_fw_l2_U_lns");
  EXPECT_EQ(enc_layer(config, true, 1).U, enc_bw_U);
  EXPECT_EQ(params.spec(enc_transition(config, true, 2, 3).U).offset + 4 * 12 + 12 + 2 * 12,
            params.values().size());
  const ModelConfig read_back = nlohmann::json(config).get<ModelConfig>();
  EXPECT_EQ(read_back.enc_depth, 3);
  EXPECT_TRUE(read_back.skip);
  EXPECT_EQ(nlohmann::json(small_config()).count("skip"), 0u);
  // --enc-type alternating: the same tensors; layer 2 of each stack reads the other way
  EXPECT_EQ(nlohmann::json(config).count("enc_type"), 0u);
  EXPECT_FALSE(enc_layer(config, false, 2).reverse);
  config.enc_type = EncoderType::alternating;
  EXPECT_EQ(parameter_count(config), shallow + 2 * 2 * per_layer);
  EXPECT_EQ(nlohmann::json(config).at("enc_type"), "alternating");
  EXPECT_EQ(nlohmann::json(config).get<ModelConfig>().enc_type, EncoderType::alternating);
  for (const auto& [backward, layer, reverse] : {std::tuple{false, 1, false}, {false, 2, true}, {false, 3, false},
                                                 {true, 1, true}, {true, 2, false}, {true, 3, true}})
    EXPECT_EQ(enc_layer(config, backward, layer).reverse, reverse) << backward << " " << layer;
  nlohmann::json wrong = config;
  wrong["enc_type"] = "bi-unidirectional";
  EXPECT_NE(test::error_of([&] { wrong.get<ModelConfig>(); }).find("'bi-unidirectional' (Marian's) is not built"),
            std::string::npos);
}

// --dec-depth D adds layers 2..D after the encoder's layers, each with W, U, b, the norms
// of W and U, and --dec-cell-high-depth H's transitions; the paper's decoder cannot have
// them, nor can high transitions go without layers.
TEST(Weights, StackedDecoderLayersComeLast) {
  ModelConfig config = small_config();
  config.enc_cell_depth = 2;
  config.dec_cell_base_depth = 2;
  config.enc_depth = 2;
  config.layer_norm = true;
  const size_t single = parameter_count(config);
  config.dec_depth = 3;
  config.dec_cell_high_depth = 3;
  const size_t per_layer = (4 * 12) * 2 + 12 + 4 * 12 + 2 * (4 * 12 + 12 + 2 * 12);  // W U b, 4 norms, 2 transitions
  EXPECT_EQ(parameter_count(config), single + 2 * per_layer);
  Parameters<float> params(config);
  EXPECT_EQ(params.spec(dec_layer(config, 2).W).name, "dec_l2_W");
  EXPECT_EQ(params.spec(dec_layer(config, 3).b).name, "dec_l3_b");
  EXPECT_EQ(params.spec(dec_layer(config, 3).transition(3).U).name, "dec_l3_cell3_U");
  EXPECT_EQ(params.spec(params.norm(dec_layer(config, 2).W).gain).name, "dec_l2_W_lns");
  EXPECT_EQ(params.spec(enc_transition(config, true, 2, 2).U).name, "enc_bw_l2_cell2_U");  // unmoved
  EXPECT_EQ(params.spec(dec_layer(config, 3).transition(3).U).offset + 4 * 12 + 12 + 2 * 12, params.values().size());
  const ModelConfig read_back = nlohmann::json(config).get<ModelConfig>();
  EXPECT_EQ(read_back.dec_depth, 3);
  EXPECT_EQ(read_back.dec_cell_high_depth, 3);
  EXPECT_EQ(read_back.state_width(), 3 * 4);
  nlohmann::json paper = config;
  paper["dec_cell_base_depth"] = 1;
  EXPECT_NE(test::error_of([&] { paper.get<ModelConfig>(); }).find("conditional GRU"), std::string::npos);
  nlohmann::json no_layers = config;
  no_layers["dec_depth"] = 1;
  EXPECT_NE(test::error_of([&] { no_layers.get<ModelConfig>(); }).find("--dec-depth 2 or more"), std::string::npos);
}

// rnnsearch average: the element-wise mean of checkpoints, refused across different models.
TEST(Weights, AverageIsTheElementwiseMean) {
  test::TempDir dir;
  Parameters<float> a(small_config()), b(small_config());
  a.init_uniform(0.1, 3);
  b.init_uniform(0.1, 4);
  save_weights(dir.path("a.npz"), a);
  save_weights(dir.path("b.npz"), b);
  average_weight_files({dir.path("a.npz"), dir.path("b.npz")}, dir.path("mean.npz"));
  Parameters<float> mean(small_config());
  load_weights(dir.path("mean.npz"), mean);
  for (size_t k = 0; k < mean.values().size(); ++k)
    EXPECT_FLOAT_EQ(mean.values()[k], (a.values()[k] + b.values()[k]) / 2) << k;
  Parameters<float> linear(small_config(OutputKind::linear));
  save_weights(dir.path("linear.npz"), linear);
  const std::string message =
      test::error_of([&] { average_weight_files({dir.path("a.npz"), dir.path("linear.npz")}, dir.path("x.npz")); });
  EXPECT_NE(message.find("linear.npz"), std::string::npos) << message;
}

TEST(Weights, MismatchedShapesMissingAndExtraArraysAreRefused) {
  test::TempDir dir;
  Parameters<float> params(small_config());
  save_weights(dir.path("model.npz"), params);
  ModelConfig bigger = small_config();
  bigger.hidden = 5;
  Parameters<float> other(bigger);
  const std::string message = test::error_of([&] { load_weights(dir.path("model.npz"), other); });
  EXPECT_NE(message.find("model.npz"), std::string::npos);
  EXPECT_NE(message.find("enc_fw_W"), std::string::npos) << message;
  // A linear model's out_W is n+e+2n × V where maxout's is n+e+2n × 2l.
  Parameters<float> linear(small_config(OutputKind::linear));
  EXPECT_NE(test::error_of([&] { load_weights(dir.path("model.npz"), linear); }).find("out_W"), std::string::npos);
  // A file without att_v, and one with an array the model does not have.
  const float value = 1;
  std::vector<NpyArrayView> arrays;
  for (int p = 0; p < params.tensor_count(); ++p)
    if (p != att_v && params.spec(Param(p)).present)
      arrays.push_back({params.spec(Param(p)).name,
                        params.spec(Param(p)).is_vector ? std::vector<long>{params.spec(Param(p)).cols}
                                                        : std::vector<long>{params.spec(Param(p)).rows, params.spec(Param(p)).cols},
                        params.data(Param(p))});
  save_npz(dir.path("partial.npz"), arrays);
  const std::string missing = test::error_of([&] { load_weights(dir.path("partial.npz"), params); });
  EXPECT_NE(missing.find("att_v"), std::string::npos) << missing;
  EXPECT_NE(missing.find("missing"), std::string::npos) << missing;
  arrays.push_back({"att_v", {4}, params.data(att_v)});
  arrays.push_back({"surplus", {1}, &value});
  save_npz(dir.path("extra.npz"), arrays);
  EXPECT_NE(test::error_of([&] { load_weights(dir.path("extra.npz"), params); }).find("surplus"), std::string::npos);
}

// Sizes in config.json are checked before anything is allocated from them; weights that
// are not finite (a diverged run) are refused, not translated into garbage.
TEST(ModelDirectory, RefusesAbsurdSizesAndBrokenWeights) {
  nlohmann::json config = small_config();
  for (const auto& [name, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"hidden", 32.7}, {"hidden", 2000000000}, {"emb", -1}, {"src_vocab", 3}, {"hidden", "256"}}) {
    nlohmann::json bad = config;
    bad[name] = value;
    const std::string message = test::error_of([&] { bad.get<ModelConfig>(); });
    EXPECT_NE(message.find(name), std::string::npos) << name << " = " << value << ": " << message;
  }
  nlohmann::json huge = config;
  huge["hidden"] = 100000;  // fits the per-size bound, but not the parameter count
  EXPECT_NE(test::error_of([&] { huge.get<ModelConfig>(); }).find("parameters"), std::string::npos);

  test::TempDir dir;
  Parameters<float> params(small_config());
  params.init_uniform(0.1, 5);
  params.mat(att_W)(1, 2) = std::numeric_limits<float>::quiet_NaN();
  save_weights(dir.path("model.npz"), params);
  Parameters<float> loaded(small_config());
  const std::string message = test::error_of([&] { load_weights(dir.path("model.npz"), loaded); });
  EXPECT_NE(message.find("att_W"), std::string::npos) << message;
  EXPECT_NE(message.find("model.npz"), std::string::npos) << message;
}

TEST(ModelDirectory, LoadsBestWeightsAndChecksVocabularies) {
  test::TempDir dir;
  ModelConfig config = small_config();
  config.src_vocab = config.tgt_vocab = 5;
  Vocab vocab = Vocab::build(std::vector<std::vector<std::string>>{{"hallo"}, {"hallo"}}, 2);  // specials + 1
  vocab.save(dir.path("vocab.src"));
  vocab.save(dir.path("vocab.tgt"));
  write_json_file(dir.path("config.json"), model_config_json(config, {}, {}));
  Parameters<float> latest(config), best(config);
  latest.init_uniform(0.1, 1);
  best.init_uniform(0.1, 2);
  save_weights(dir.path("model.npz"), latest);
  EXPECT_EQ(load_model(dir.path("")).params.values(), latest.values());
  save_weights(dir.path("model.best.npz"), best);
  EXPECT_EQ(load_model(dir.path("")).params.values(), best.values());

  config.tgt_vocab = 6;
  write_json_file(dir.path("config.json"), model_config_json(config, {}, {}));
  EXPECT_NE(test::error_of([&] { load_model(dir.path("")); }).find("config.json"), std::string::npos);
}

}  // namespace
}  // namespace rnnsearch
