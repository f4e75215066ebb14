#include "rnnsearch/model/config.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "rnnsearch/error.h"

namespace rnnsearch {

std::string output_kind_name(OutputKind kind) { return kind == OutputKind::maxout ? "maxout" : "linear"; }

OutputKind parse_output_kind(const std::string& name) {
  if (name == "maxout") return OutputKind::maxout;
  if (name == "linear") return OutputKind::linear;
  throw Error("unknown output layer '" + name + "' (expected maxout or linear)");
}

void to_json(nlohmann::json& j, const ModelConfig& c) {
  j = nlohmann::json{{"src_vocab", c.src_vocab}, {"tgt_vocab", c.tgt_vocab}, {"emb", c.emb},
                     {"hidden", c.hidden},       {"maxout", c.maxout},
                     {"output_layer", output_kind_name(c.output)}};
  // absent in models from before each option, and when off
  if (c.tied_embeddings) j["tied_embeddings"] = true;
  if (c.layer_norm) j["layer_normalization"] = true;
  if (c.enc_cell_depth > 1) j["enc_cell_depth"] = c.enc_cell_depth;
  if (c.dec_cell_base_depth > 1) j["dec_cell_base_depth"] = c.dec_cell_base_depth;
  if (c.enc_depth > 1) j["enc_depth"] = c.enc_depth;
  if (c.skip) j["skip"] = true;
}

void check_tied_embeddings(const ModelConfig& c) {
  if (!c.tied_embeddings) return;
  if (c.output != OutputKind::maxout)
    throw Error("tied embeddings need the maxout output layer (the linear one projects [s, E, c], not e units)");
  if (c.maxout != c.emb)
    throw Error("tied embeddings need as many maxout units as embedding units (l = " + std::to_string(c.maxout) +
                ", e = " + std::to_string(c.emb) + ")");
}

namespace {

// Sizes are checked before anything is allocated from them: a corrupt or hostile
// config.json must give an error, not an overflow or an attempt to allocate terabytes.
constexpr long kMaxSize = 1 << 22;           // any one size (vocabulary, e, n, l)
constexpr long kMaxParameters = 1L << 31;    // 8 GiB of float32 weights

int whole_number(const nlohmann::json& value, const char* name, long minimum, long maximum) {
  if (!value.is_number_integer() || value.get<long>() < minimum || value.get<long>() > maximum)
    throw Error(std::string("model config: \"") + name + "\" must be a whole number in [" + std::to_string(minimum) +
                ", " + std::to_string(maximum) + "], not " + value.dump());
  return value.get<int>();
}

int size_field(const nlohmann::json& j, const char* name, long minimum) {
  return whole_number(j.at(name), name, minimum, kMaxSize);
}

}  // namespace

void from_json(const nlohmann::json& j, ModelConfig& c) {
  try {
    c.src_vocab = size_field(j, "src_vocab", 4);  // the 4 specials at least
    c.tgt_vocab = size_field(j, "tgt_vocab", 4);
    c.emb = size_field(j, "emb", 1);
    c.hidden = size_field(j, "hidden", 1);
    c.maxout = size_field(j, "maxout", 1);
    c.output = parse_output_kind(j.at("output_layer").get<std::string>());
    c.tied_embeddings = j.value("tied_embeddings", false);
    c.layer_norm = j.value("layer_normalization", false);
    c.enc_cell_depth = whole_number(j.value("enc_cell_depth", nlohmann::json(1)), "enc_cell_depth", 1, kMaxCellDepth);
    c.dec_cell_base_depth =
        whole_number(j.value("dec_cell_base_depth", nlohmann::json(1)), "dec_cell_base_depth", 1, kMaxCellDepth);
    c.enc_depth = whole_number(j.value("enc_depth", nlohmann::json(1)), "enc_depth", 1, kMaxDepth);
    c.skip = j.value("skip", false);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("model config: ") + e.what());
  }
  check_tied_embeddings(c);
  long parameters = 0;
  for (const ParamSpec& spec : parameter_layout(c)) parameters += spec.present ? spec.rows * spec.cols : 0;
  if (parameters > kMaxParameters)
    throw Error("model config: " + std::to_string(parameters) + " parameters, more than the " +
                std::to_string(kMaxParameters) + " rnnsearch handles");
}

std::vector<ParamSpec> parameter_layout(const ModelConfig& c) {
  const long e = c.emb, n = c.hidden, Vs = c.src_vocab, Vt = c.tgt_vocab;
  const bool maxout = c.output == OutputKind::maxout;
  //                  name        rows            cols                vector present
  std::vector<ParamSpec> specs = {
      {"src_emb", Vs, e, false, true, 0},          {"tgt_emb", Vt, e, false, true, 0},
      {"enc_fw_W", e, 3 * n, false, true, 0},      {"enc_fw_U", n, 3 * n, false, true, 0},
      {"enc_fw_b", 1, 3 * n, true, true, 0},       {"enc_bw_W", e, 3 * n, false, true, 0},
      {"enc_bw_U", n, 3 * n, false, true, 0},      {"enc_bw_b", 1, 3 * n, true, true, 0},
      {"init_W", 2 * n, n, false, true, 0},        {"init_b", 1, n, true, true, 0},
      {"att_U", 2 * n, n, false, true, 0},         {"att_b", 1, n, true, true, 0},
      {"att_W", n, n, false, true, 0},             {"att_v", 1, n, true, true, 0},
      {"dec_W", e, 3 * n, false, true, 0},         {"dec_b", 1, 3 * n, true, true, 0},
      {"dec_C", 2 * n, 3 * n, false, true, 0},     {"dec_U", n, 3 * n, false, true, 0},
      {"out_W", c.output_input(), c.output_width(), false, true, 0},
      {"out_b", 1, c.output_width(), true, true, 0},
      {"out_Wo", c.maxout, Vt, false, maxout && !c.tied_embeddings, 0},  {"out_bo", 1, Vt, true, maxout, 0},
  };
  // --layer-normalization: the gain (1) and bias (0) of a product M, 3n each, named M_lns, M_lnb
  auto add_norm = [&](Param product) {
    if (c.layer_norm) specs[product].norm_gain = static_cast<int>(specs.size());
    for (const char* suffix : {"_lns", "_lnb"})
      specs.push_back({specs[product].name + suffix, 1, 3 * n, true, c.layer_norm, 0, suffix[3] == 's' ? 1.0 : 0.0});
  };
  for (Param product : {enc_fw_W, enc_fw_U, enc_bw_W, enc_bw_U, dec_W, dec_C, dec_U}) add_norm(product);
  if (specs.size() != kNumParams) throw std::logic_error("parameter_layout: the Param enum and the specs disagree");
  // --enc-cell-depth: transitions 2..N of each direction (enc_transition); then
  // --dec-cell-base-depth: the conditional decoder's cells 2..B (dec_cell)
  auto add_cells = [&](const std::string& prefix, int depth) {
    for (int k = 2; k <= depth; ++k) {
      const std::string cell = prefix + "_cell" + std::to_string(k);
      specs.push_back({cell + "_U", n, 3 * n, false, true, 0});
      specs.push_back({cell + "_b", 1, 3 * n, true, true, 0});
      add_norm(static_cast<Param>(specs.size() - 2));
    }
  };
  add_cells("enc_fw", c.enc_cell_depth);
  add_cells("enc_bw", c.enc_cell_depth);
  add_cells("dec", c.dec_cell_base_depth);
  // --enc-depth: layers 2..L of each direction (enc_layer), each with its transitions
  for (const char* direction : {"enc_fw", "enc_bw"})
    for (int l = 2; l <= c.enc_depth; ++l) {
      const std::string layer = std::string(direction) + "_l" + std::to_string(l);
      const Param W = static_cast<Param>(specs.size());
      specs.push_back({layer + "_W", n, 3 * n, false, true, 0});
      specs.push_back({layer + "_U", n, 3 * n, false, true, 0});
      specs.push_back({layer + "_b", 1, 3 * n, true, true, 0});
      add_norm(W);
      add_norm(static_cast<Param>(W + 1));
      add_cells(layer, c.enc_cell_depth);
    }
  size_t offset = 0;
  for (ParamSpec& s : specs) {
    s.offset = offset;
    offset += s.size();
  }
  return specs;
}

namespace {

// The first index of encoder layer l ≥ 2's block (enc_layer), and the block's size.
int layer_block_size(const ModelConfig& c) { return 7 + 4 * (c.enc_cell_depth - 1); }
int layer_block(const ModelConfig& c, bool backward, int l) {
  const int after_cells = kNumParams + 4 * (2 * (c.enc_cell_depth - 1) + c.dec_cell_base_depth - 1);
  return after_cells + ((backward ? c.enc_depth - 1 : 0) + l - 2) * layer_block_size(c);
}

}  // namespace

Transition enc_transition(const ModelConfig& c, bool backward, int k, int layer) {
  if (k < 2 || k > c.enc_cell_depth || layer < 1 || layer > c.enc_depth)
    throw std::logic_error("enc_transition: no transition " + std::to_string(k) + " in layer " + std::to_string(layer));
  const int first = layer == 1 ? kNumParams + 4 * ((backward ? c.enc_cell_depth - 1 : 0) + k - 2)
                               : layer_block(c, backward, layer) + 7 + 4 * (k - 2);
  return {static_cast<Param>(first), static_cast<Param>(first + 1)};
}

EncoderLayer enc_layer(const ModelConfig& c, bool backward, int l) {
  if (l < 1 || l > c.enc_depth) throw std::logic_error("enc_layer: no layer " + std::to_string(l));
  if (l == 1) return backward ? EncoderLayer{enc_bw_W, enc_bw_U, enc_bw_b} : EncoderLayer{enc_fw_W, enc_fw_U, enc_fw_b};
  const int first = layer_block(c, backward, l);
  return {static_cast<Param>(first), static_cast<Param>(first + 1), static_cast<Param>(first + 2)};
}

Transition dec_cell(const ModelConfig& c, int k) {
  if (k < 2 || k > c.dec_cell_base_depth) throw std::logic_error("dec_cell: no cell " + std::to_string(k));
  const int first = kNumParams + 4 * (2 * (c.enc_cell_depth - 1) + k - 2);
  return {static_cast<Param>(first), static_cast<Param>(first + 1)};
}

size_t parameter_count(const ModelConfig& config) {
  const auto specs = parameter_layout(config);
  return specs.back().offset + specs.back().size();
}

}  // namespace rnnsearch
