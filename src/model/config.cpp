#include "rnnsearch/model/config.h"

#include <iterator>
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

int size_field(const nlohmann::json& j, const char* name, long minimum) {
  const nlohmann::json& value = j.at(name);
  if (!value.is_number_integer() || value.get<long>() < minimum || value.get<long>() > kMaxSize)
    throw Error(std::string("model config: \"") + name + "\" must be a whole number in [" + std::to_string(minimum) +
                ", " + std::to_string(kMaxSize) + "], not " + value.dump());
  return value.get<int>();
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
  // --layer-normalization: the gain and bias of each product, 3n each, in the Param order
  static constexpr const char* kNormNames[] = {
      "enc_fw_W_lns", "enc_fw_W_lnb", "enc_fw_U_lns", "enc_fw_U_lnb", "enc_bw_W_lns", "enc_bw_W_lnb",
      "enc_bw_U_lns", "enc_bw_U_lnb", "dec_W_lns",    "dec_W_lnb",    "dec_C_lns",    "dec_C_lnb",
      "dec_U_lns",    "dec_U_lnb"};
  static_assert(std::size(kNormNames) == kNumParams - enc_fw_W_lns, "one name per layer-norm tensor");
  for (size_t k = 0; k < std::size(kNormNames); ++k)
    specs.push_back({kNormNames[k], 1, 3 * n, true, c.layer_norm, 0, k % 2 == 0 ? 1.0 : 0.0});
  size_t offset = 0;
  for (ParamSpec& s : specs) {
    s.offset = offset;
    offset += s.size();
  }
  return specs;
}

NormParams norm_params(Param product) {
  switch (product) {
    case enc_fw_W: return {enc_fw_W_lns, enc_fw_W_lnb};
    case enc_fw_U: return {enc_fw_U_lns, enc_fw_U_lnb};
    case enc_bw_W: return {enc_bw_W_lns, enc_bw_W_lnb};
    case enc_bw_U: return {enc_bw_U_lns, enc_bw_U_lnb};
    case dec_W: return {dec_W_lns, dec_W_lnb};
    case dec_C: return {dec_C_lns, dec_C_lnb};
    case dec_U: return {dec_U_lns, dec_U_lnb};
    default: throw std::logic_error("norm_params: no layer normalization of this product");
  }
}

size_t parameter_count(const ModelConfig& config) {
  const auto specs = parameter_layout(config);
  return specs.back().offset + specs.back().size();
}

}  // namespace rnnsearch
