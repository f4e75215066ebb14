#pragma once
// The model directory of DESIGN.md §2: model.npz / model.best.npz, config.json, vocab.src,
// vocab.tgt. Loading checks every array's name, shape and size against config.json.
#include <string>

#include <nlohmann/json.hpp>

#include "rnnsearch/model/parameters.h"
#include "rnnsearch/text/tokenizer.h"
#include "rnnsearch/text/vocab.h"

namespace rnnsearch {

struct Model {
  ModelConfig config;
  TokenizerOptions tokenizer;
  Vocab src_vocab, tgt_vocab;
  Parameters<float> params;
  std::string weights_path;  // the .npz the weights came from
};

std::string model_file(const std::string& dir, const std::string& name);  // dir + "/" + name

// Reads config.json, the vocabularies and the weights: model.best.npz when present (the best
// by validation cost), else model.npz. Throws rnnsearch::Error naming the file at fault.
Model load_model(const std::string& dir);

void save_weights(const std::string& path, const Parameters<float>& params);
// Every array of the layout must be present with exactly its shape; extra arrays are refused.
void load_weights(const std::string& path, Parameters<float>& params);

nlohmann::json read_json_file(const std::string& path);                  // throws rnnsearch::Error
void write_json_file(const std::string& path, const nlohmann::json& j);  // atomic

// config.json: {"model": {...sizes...}, "tokenizer": {"lowercase": ...}, "training": {...}}
nlohmann::json model_config_json(const ModelConfig& config, const TokenizerOptions& tokenizer,
                                 const nlohmann::json& training);

}  // namespace rnnsearch
