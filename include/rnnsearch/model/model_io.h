#pragma once
// The model directory of docs/design.md §2: model.npz / model.best.npz, config.json, vocab.src,
// vocab.tgt. Loading checks every array's name, shape and size against config.json.
#include <string>

#include <nlohmann/json.hpp>

#include "rnnsearch/model/parameters.h"
#include "rnnsearch/text/subwords.h"
#include "rnnsearch/text/tokenizer.h"
#include "rnnsearch/text/vocab.h"

namespace rnnsearch {

// What a model directory defines besides its weights.
struct ModelDefinition {
  ModelConfig config;
  TokenizerOptions tokenizer;
  Subwords src_subwords, tgt_subwords;  // the identity for word-level models
  Vocab src_vocab, tgt_vocab;           // of pieces (words, for word-level models)
  bool uses_subwords() const { return !src_subwords.identity() || !tgt_subwords.identity(); }
};

struct Model : ModelDefinition {
  Parameters<float> params;
  std::string weights_path;  // the .npz the weights came from
};

// The files of a model directory, named here once. Translation reads the first five;
// training also keeps what resuming needs.
namespace model_files {
constexpr const char* kWeights = "model.npz";            // the latest weights
constexpr const char* kBestWeights = "model.best.npz";   // the best by validation
constexpr const char* kConfig = "config.json";
constexpr const char* kSrcVocab = "vocab.src";
constexpr const char* kTgtVocab = "vocab.tgt";
constexpr const char* kSrcSubwords = "subwords.src.model";  // SentencePiece, subword models only
constexpr const char* kTgtSubwords = "subwords.tgt.model";
constexpr const char* kOptimizer = "optimizer.npz";      // optimizer state of model.npz
constexpr const char* kProgress = "progress.json";       // where training stands
constexpr const char* kTrainLog = "train.log";
constexpr const char* kTrainLock = "train.lock";      // held by the one trainer of the directory
constexpr const char* kCorpusCache = "corpus.bin";    // the training corpus as ids (text/corpus_cache.h)
}  // namespace model_files

std::string model_file(const std::string& dir, const std::string& name);  // dir + "/" + name
// Whether file `name` of two model directories is the same: absent from both, or present in
// both with the same bytes (vocabularies, subword models).
bool same_model_file(const std::string& dir_a, const std::string& dir_b, const std::string& name);

// Reads config.json and the vocabularies, checked against each other. Throws
// rnnsearch::Error naming the file at fault.
ModelDefinition load_model_definition(const std::string& dir);

// Reads config.json, the vocabularies and the weights: model.best.npz when present (the best
// by validation cost), else model.npz. Throws rnnsearch::Error naming the file at fault.
Model load_model(const std::string& dir);

// The models of an ensemble (translate/score -m A -m B ...): each loaded as load_model does;
// they may differ in sizes but must share tokenizer, subword models and vocabularies
// (throws rnnsearch::Error naming the file that differs).
std::vector<Model> load_ensemble(const std::vector<std::string>& dirs);
// The weights of each model, for Translator and Scorer.
std::vector<const Parameters<float>*> ensemble_weights(const std::vector<Model>& models);

void save_weights(const std::string& path, const Parameters<float>& params);
// Every array of the layout must be present with exactly its shape; extra arrays are refused.
void load_weights(const std::string& path, Parameters<float>& params);

// The element-wise mean of the weight files `inputs` (checkpoint averaging), written to
// output. Every file must hold the same arrays with the same shapes; throws rnnsearch::Error
// naming the first file that differs.
void average_weight_files(const std::vector<std::string>& inputs, const std::string& output);

nlohmann::json read_json_file(const std::string& path);                  // throws rnnsearch::Error
void write_json_file(const std::string& path, const nlohmann::json& j);  // atomic

// config.json: {"model": {...sizes...}, "tokenizer": {"lowercase": ...}, "training": {...}}
nlohmann::json model_config_json(const ModelConfig& config, const TokenizerOptions& tokenizer,
                                 const nlohmann::json& training);

}  // namespace rnnsearch
