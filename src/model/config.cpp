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

std::string encoder_type_name(EncoderType type) {
  return type == EncoderType::alternating ? "alternating" : "bidirectional";
}

EncoderType parse_encoder_type(const std::string& name) {
  if (name == "bidirectional") return EncoderType::bidirectional;
  if (name == "alternating") return EncoderType::alternating;
  if (name == "bi-unidirectional")
    throw Error("encoder type 'bi-unidirectional' (Marian's) is not built: bidirectional or alternating");
  throw Error("unknown encoder type '" + name + "' (expected bidirectional or alternating)");
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
  if (c.enc_type != EncoderType::bidirectional) j["enc_type"] = encoder_type_name(c.enc_type);
  if (c.dec_depth > 1) j["dec_depth"] = c.dec_depth;
  if (c.dec_cell_high_depth > 1) j["dec_cell_high_depth"] = c.dec_cell_high_depth;
  if (c.skip) j["skip"] = true;
  if (c.alignment_output > 0) j["alignment_output"] = c.alignment_output;
}

void check_tied_embeddings(const ModelConfig& c) {
  if (!c.tied_embeddings) return;
  if (c.output != OutputKind::maxout)
    throw Error("tied embeddings need the maxout output layer (the linear one projects [s, E, c], not e units)");
  if (c.maxout != c.emb)
    throw Error("tied embeddings need as many maxout units as embedding units (l = " + std::to_string(c.maxout) +
                ", e = " + std::to_string(c.emb) + ")");
}

void check_decoder_layers(const ModelConfig& c) {
  if (c.dec_depth > 1 && !c.conditional_decoder())
    throw Error("--dec-depth " + std::to_string(c.dec_depth) +
                ": stacked decoder layers sit on the conditional GRU, as in Marian's s2s (give --dec-cell-base-depth 2 "
                "or more)");
  if (c.dec_cell_high_depth > 1 && c.dec_depth == 1)
    throw Error("--dec-cell-high-depth " + std::to_string(c.dec_cell_high_depth) +
                " is the depth of decoder layers 2 and up: give --dec-depth 2 or more");
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
    c.enc_type = parse_encoder_type(j.value("enc_type", std::string("bidirectional")));
    c.dec_depth = whole_number(j.value("dec_depth", nlohmann::json(1)), "dec_depth", 1, kMaxDepth);
    c.dec_cell_high_depth =
        whole_number(j.value("dec_cell_high_depth", nlohmann::json(1)), "dec_cell_high_depth", 1, kMaxCellDepth);
    c.skip = j.value("skip", false);
    c.alignment_output = whole_number(j.value("alignment_output", nlohmann::json(0)), "alignment_output", 0, kMaxSize);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("model config: ") + e.what());
  }
  check_tied_embeddings(c);
  check_decoder_layers(c);
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
  // --enc-depth: layers 2..L of each direction (enc_layer), then --dec-depth: the decoder's
  // layers 2..D (dec_layer), each with its transitions
  auto add_layer = [&](const std::string& layer, int depth) {
    const Param W = static_cast<Param>(specs.size());
    specs.push_back({layer + "_W", n, 3 * n, false, true, 0});
    specs.push_back({layer + "_U", n, 3 * n, false, true, 0});
    specs.push_back({layer + "_b", 1, 3 * n, true, true, 0});
    add_norm(W);
    add_norm(static_cast<Param>(W + 1));
    add_cells(layer, depth);
  };
  for (const char* direction : {"enc_fw", "enc_bw"})
    for (int l = 2; l <= c.enc_depth; ++l)
      add_layer(std::string(direction) + "_l" + std::to_string(l), c.enc_cell_depth);
  for (int l = 2; l <= c.dec_depth; ++l) add_layer("dec_l" + std::to_string(l), c.dec_cell_high_depth);
  // --alignment-output N: its query weights over [s, E, c, E_y], key weights and bias over the
  // annotations, and the energy vector (alignment_output_params)
  if (c.alignment_output > 0) {
    const long na = c.alignment_output;
    specs.push_back({"aln_W", c.alignment_input(), na, false, true, 0});
    specs.push_back({"aln_U", 2 * n, na, false, true, 0});
    specs.push_back({"aln_b", 1, na, true, true, 0});
    specs.push_back({"aln_v", 1, na, true, true, 0});
  }
  size_t offset = 0;
  for (ParamSpec& s : specs) {
    s.offset = offset;
    offset += s.size();
  }
  return specs;
}

namespace {

// The first index of a stacked layer's block (enc_layer, dec_layer) and the block's size:
// W, U, b, their 4 norms, then 4 per transition.
int layer_block_size(int depth) { return 7 + 4 * (depth - 1); }
int first_layer_block(const ModelConfig& c) {
  return kNumParams + 4 * (2 * (c.enc_cell_depth - 1) + c.dec_cell_base_depth - 1);
}
int enc_layer_block(const ModelConfig& c, bool backward, int l) {
  return first_layer_block(c) + ((backward ? c.enc_depth - 1 : 0) + l - 2) * layer_block_size(c.enc_cell_depth);
}
int dec_layer_block(const ModelConfig& c, int l) {
  return first_layer_block(c) + 2 * (c.enc_depth - 1) * layer_block_size(c.enc_cell_depth) +
         (l - 2) * layer_block_size(c.dec_cell_high_depth);
}

// The layer whose block starts at `first` (W, U, b, norms, transitions 2..depth).
GruLayerParams layer_at(int first, int depth) {
  GruLayerParams p{static_cast<Param>(first), static_cast<Param>(first + 1), static_cast<Param>(first + 2), depth};
  for (int k = 2; k <= depth; ++k)
    p.transitions[k - 2] = {static_cast<Param>(first + 7 + 4 * (k - 2)), static_cast<Param>(first + 8 + 4 * (k - 2))};
  return p;
}

}  // namespace

Transition enc_transition(const ModelConfig& c, bool backward, int k, int layer) {
  if (k < 2 || k > c.enc_cell_depth || layer < 1 || layer > c.enc_depth)
    throw std::logic_error("enc_transition: no transition " + std::to_string(k) + " in layer " + std::to_string(layer));
  if (layer > 1) return layer_at(enc_layer_block(c, backward, layer), c.enc_cell_depth).transition(k);
  const int first = kNumParams + 4 * ((backward ? c.enc_cell_depth - 1 : 0) + k - 2);
  return {static_cast<Param>(first), static_cast<Param>(first + 1)};
}

GruLayerParams enc_layer(const ModelConfig& c, bool backward, int l) {
  if (l < 1 || l > c.enc_depth) throw std::logic_error("enc_layer: no layer " + std::to_string(l));
  GruLayerParams p = l > 1 ? layer_at(enc_layer_block(c, backward, l), c.enc_cell_depth)
                   : backward ? GruLayerParams{enc_bw_W, enc_bw_U, enc_bw_b, c.enc_cell_depth}
                              : GruLayerParams{enc_fw_W, enc_fw_U, enc_fw_b, c.enc_cell_depth};
  if (l == 1)
    for (int k = 2; k <= c.enc_cell_depth; ++k) p.transitions[k - 2] = enc_transition(c, backward, k, 1);
  // alternating: layers 2, 4, … read against their stack's direction
  p.reverse = backward != (c.enc_type == EncoderType::alternating && l % 2 == 0);
  p.residual = c.skip && l > 1;
  return p;
}

GruLayerParams dec_layer(const ModelConfig& c, int l) {
  if (l < 2 || l > c.dec_depth) throw std::logic_error("dec_layer: no layer " + std::to_string(l));
  GruLayerParams p = layer_at(dec_layer_block(c, l), c.dec_cell_high_depth);
  p.residual = c.skip;
  return p;
}

Transition dec_cell(const ModelConfig& c, int k) {
  if (k < 2 || k > c.dec_cell_base_depth) throw std::logic_error("dec_cell: no cell " + std::to_string(k));
  const int first = kNumParams + 4 * (2 * (c.enc_cell_depth - 1) + k - 2);
  return {static_cast<Param>(first), static_cast<Param>(first + 1)};
}

AlignmentOutputParams alignment_output_params(const ModelConfig& c) {
  if (c.alignment_output <= 0) throw std::logic_error("alignment_output_params: the model has no alignment output");
  const int first = dec_layer_block(c, c.dec_depth + 1);  // where a next decoder layer would start
  return {static_cast<Param>(first), static_cast<Param>(first + 1), static_cast<Param>(first + 2),
          static_cast<Param>(first + 3)};
}

size_t parameter_count(const ModelConfig& config) {
  const auto specs = parameter_layout(config);
  return specs.back().offset + specs.back().size();
}

FlatRange output_layer_span(const ModelConfig& config) {
  const auto specs = parameter_layout(config);
  static_assert(out_b == out_W + 1 && out_Wo == out_W + 2 && out_bo == out_W + 3, "the output layer's tensors lie together");
  return {specs[out_W].offset, specs[out_bo].offset + specs[out_bo].size()};
}

}  // namespace rnnsearch
