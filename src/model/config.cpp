#include "rnnsearch/model/config.h"

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
}

void from_json(const nlohmann::json& j, ModelConfig& c) {
  try {
    c.src_vocab = j.at("src_vocab").get<int>();
    c.tgt_vocab = j.at("tgt_vocab").get<int>();
    c.emb = j.at("emb").get<int>();
    c.hidden = j.at("hidden").get<int>();
    c.maxout = j.at("maxout").get<int>();
    c.output = parse_output_kind(j.at("output_layer").get<std::string>());
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("model config: ") + e.what());
  }
  if (c.src_vocab < 4 || c.tgt_vocab < 4 || c.emb < 1 || c.hidden < 1 || c.maxout < 1)
    throw Error("model config: sizes must be positive and vocabularies hold at least the 4 specials");
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
      {"out_Wo", c.maxout, Vt, false, maxout, 0},  {"out_bo", 1, Vt, true, maxout, 0},
  };
  size_t offset = 0;
  for (ParamSpec& s : specs) {
    s.offset = offset;
    offset += s.size();
  }
  return specs;
}

size_t parameter_count(const ModelConfig& config) {
  const auto specs = parameter_layout(config);
  return specs.back().offset + specs.back().size();
}

}  // namespace rnnsearch
