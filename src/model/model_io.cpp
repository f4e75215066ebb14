#include "rnnsearch/model/model_io.h"

#include <cmath>
#include <filesystem>

#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/io/npz.h"

namespace rnnsearch {
namespace {

std::vector<long> shape_of(const ParamSpec& spec) {
  return spec.is_vector ? std::vector<long>{spec.cols} : std::vector<long>{spec.rows, spec.cols};
}

std::string shape_text(const std::vector<long>& shape) {
  std::string s = "[";
  for (size_t k = 0; k < shape.size(); ++k) s += (k ? "," : "") + std::to_string(shape[k]);
  return s + "]";
}

}  // namespace

std::string model_file(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

bool same_model_file(const std::string& dir_a, const std::string& dir_b, const std::string& name) {
  const std::string a = model_file(dir_a, name), b = model_file(dir_b, name);
  const bool exists = std::filesystem::exists(a);
  return exists == std::filesystem::exists(b) && (!exists || read_file(a) == read_file(b));
}

void save_weights(const std::string& path, const Parameters<float>& params) {
  std::vector<NpyArrayView> arrays;
  for (int p = 0; p < params.tensor_count(); ++p) {
    const ParamSpec& spec = params.spec(static_cast<Param>(p));
    if (spec.present) arrays.push_back({spec.name, shape_of(spec), params.data(static_cast<Param>(p))});
  }
  save_npz(path, arrays);
}

void load_weights(const std::string& path, Parameters<float>& params) {
  std::map<std::string, NpyArray> arrays = load_npz(path);
  for (int p = 0; p < params.tensor_count(); ++p) {
    const ParamSpec& spec = params.spec(static_cast<Param>(p));
    if (!spec.present) continue;
    auto it = arrays.find(spec.name);
    if (it == arrays.end()) throw Error(located(path, 0, std::string("array '") + spec.name + "' is missing"));
    if (it->second.is_integer) throw Error(located(path, 0, std::string("array '") + spec.name + "' is int64, expected float32"));
    if (it->second.shape != shape_of(spec))
      throw Error(located(path, 0, std::string("array '") + spec.name + "' has shape " + shape_text(it->second.shape) +
                                       ", config.json says " + shape_text(shape_of(spec))));
    for (float value : it->second.data)
      if (!std::isfinite(value))
        throw Error(located(path, 0, std::string("array '") + spec.name + "' holds " + std::to_string(value) +
                                         ": the weights are broken (a diverged run?)"));
    std::copy(it->second.data.begin(), it->second.data.end(), params.data(static_cast<Param>(p)));
    arrays.erase(it);
  }
  if (!arrays.empty())
    throw Error(located(path, 0, "unexpected array '" + arrays.begin()->first + "' (not a parameter of this model)"));
}

nlohmann::json read_json_file(const std::string& path) {
  try {
    return nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(located(path, 0, std::string("invalid JSON: ") + e.what()));
  }
}

void write_json_file(const std::string& path, const nlohmann::json& j) {
  write_file_atomically(path, j.dump(2) + "\n");
}

nlohmann::json model_config_json(const ModelConfig& config, const TokenizerOptions& tokenizer,
                                 const nlohmann::json& training) {
  // Models from before raw text have no "kind": they are word-level.
  nlohmann::json text = {{"kind", tokenizer_kind_name(tokenizer.kind)}};
  if (tokenizer.kind == TokenizerKind::words) text["lowercase"] = tokenizer.lowercase;
  return {{"model", config}, {"tokenizer", text}, {"training", training}};
}

ModelDefinition load_model_definition(const std::string& dir) {
  const std::string config_path = model_file(dir, model_files::kConfig);
  if (!std::filesystem::is_directory(dir)) throw Error(located(dir, 0, "no such model directory"));
  const nlohmann::json j = read_json_file(config_path);
  ModelDefinition model;
  try {
    model.config = j.at("model").get<ModelConfig>();
    const nlohmann::json& text = j.at("tokenizer");
    model.tokenizer.kind = parse_tokenizer_kind(text.value("kind", "words"), "\"tokenizer\": \"kind\"");
    model.tokenizer.lowercase = model.tokenizer.kind == TokenizerKind::words && text.value("lowercase", true);
  } catch (const std::exception& e) {
    throw Error(located(config_path, 0, e.what()));
  }
  for (auto [name, subwords] : {std::pair{model_files::kSrcSubwords, &model.src_subwords},
                                {model_files::kTgtSubwords, &model.tgt_subwords}})
    if (std::filesystem::exists(model_file(dir, name))) *subwords = Subwords::load(model_file(dir, name));
  model.src_vocab = Vocab::load(model_file(dir, model_files::kSrcVocab));
  model.tgt_vocab = Vocab::load(model_file(dir, model_files::kTgtVocab));
  model.src_subwords.restrict_to(model.src_vocab.tokens());  // text is cut into pieces with ids
  model.tgt_subwords.restrict_to(model.tgt_vocab.tokens());
  const ModelConfig& config = model.config;
  if (static_cast<int>(model.src_vocab.size()) != config.src_vocab ||
      static_cast<int>(model.tgt_vocab.size()) != config.tgt_vocab)
    throw Error(located(config_path, 0,
                        "vocabulary sizes " + std::to_string(config.src_vocab) + "/" + std::to_string(config.tgt_vocab) +
                            " do not match vocab.src/vocab.tgt (" + std::to_string(model.src_vocab.size()) + "/" +
                            std::to_string(model.tgt_vocab.size()) + ")"));
  return model;
}

std::vector<Model> load_ensemble(const std::vector<std::string>& dirs) {
  std::vector<Model> models;
  for (const std::string& dir : dirs) {
    models.push_back(load_model(dir));
    if (models.size() == 1) continue;
    for (const char* name : {model_files::kSrcVocab, model_files::kTgtVocab, model_files::kSrcSubwords,
                             model_files::kTgtSubwords}) {
      if (!same_model_file(dirs.front(), dir, name))
        throw Error(located(model_file(dir, name), 0,
                            "differs from " + model_file(dirs.front(), name) + ": an ensemble's models must share " +
                                "their vocabularies and subword models"));
    }
    const TokenizerOptions &first = models.front().tokenizer, &other = models.back().tokenizer;
    if (other.kind != first.kind || other.lowercase != first.lowercase)
      throw Error(located(model_file(dir, model_files::kConfig), 0, "tokenizes differently from " + dirs.front()));
  }
  return models;
}

std::vector<const Parameters<float>*> ensemble_weights(const std::vector<Model>& models) {
  std::vector<const Parameters<float>*> weights;
  for (const Model& model : models) weights.push_back(&model.params);
  return weights;
}

void average_weight_files(const std::vector<std::string>& inputs, const std::string& output) {
  if (inputs.empty()) throw Error("no weight files to average");
  std::map<std::string, NpyArray> sum = load_npz(inputs.front());
  for (const auto& [name, array] : sum)
    if (array.is_integer) throw Error(located(inputs.front(), 0, "array '" + name + "' is int64: not weights to average"));
  for (size_t k = 1; k < inputs.size(); ++k) {
    const std::map<std::string, NpyArray> next = load_npz(inputs[k]);
    if (next.size() != sum.size())
      throw Error(located(inputs[k], 0, "holds other arrays than " + inputs.front()));
    for (auto& [name, array] : sum) {
      const auto it = next.find(name);
      if (it == next.end() || it->second.shape != array.shape || it->second.is_integer != array.is_integer)
        throw Error(located(inputs[k], 0, "array '" + name + "' is missing or has another shape or type than in " +
                                              inputs.front()));
      for (size_t i = 0; i < array.data.size(); ++i) array.data[i] += it->second.data[i];
    }
  }
  std::vector<NpyArrayView> views;
  for (auto& [name, array] : sum) {
    for (float& value : array.data) value /= static_cast<float>(inputs.size());
    views.push_back({name, array.shape, array.data.data()});
  }
  save_npz(output, views);
}

Model load_model(const std::string& dir) {
  ModelDefinition definition = load_model_definition(dir);
  const std::string best = model_file(dir, model_files::kBestWeights);
  const std::string weights = std::filesystem::exists(best) ? best : model_file(dir, model_files::kWeights);
  Parameters<float> params(definition.config);
  Model model{std::move(definition), std::move(params), weights};
  load_weights(weights, model.params);
  return model;
}

}  // namespace rnnsearch
