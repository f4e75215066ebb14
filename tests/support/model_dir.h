#pragma once
// A random model directory (config.json, vocab.src, vocab.tgt, model.npz) that the CLI and
// the server load as a trained one: tiny vocabularies of plain words, weights uniform in
// [-0.5, 0.5] from a fixed seed.
#include <filesystem>
#include <string>
#include <vector>

#include "fixtures.h"
#include "rnnsearch/model/model_io.h"

namespace rnnsearch::test {

// unk_bias is added to <unk>'s output logit (very negative: <unk> is never chosen, so an
// output re-tokenizes to itself). shape, when given, makes the architecture of the tiny
// config (e.g. deep_s2s).
inline void write_model_dir(const std::string& dir, const std::vector<std::string>& src_words,
                            const std::vector<std::string>& tgt_words, float unk_bias, int emb = 8, int hidden = 6,
                            int maxout = 4, ModelConfig (*shape)(ModelConfig) = nullptr) {
  std::filesystem::create_directories(dir);
  const Vocab src = Vocab::build({src_words}, 1);
  const Vocab tgt = Vocab::build({tgt_words}, 1);
  ModelConfig config = tiny_config(static_cast<int>(src.size()), static_cast<int>(tgt.size()),
                                   OutputKind::maxout, emb, hidden, maxout);
  if (shape) config = shape(config);
  Parameters<float> params(config);
  params.init_uniform(0.5, 17);
  params.vec(out_bo)(Vocab::kUnk) += unk_bias;
  src.save(model_file(dir, "vocab.src"));
  tgt.save(model_file(dir, "vocab.tgt"));
  write_json_file(model_file(dir, "config.json"), model_config_json(config, TokenizerOptions{}, nlohmann::json::object()));
  save_weights(model_file(dir, "model.npz"), params);
}

// A random model of six English and six German words written into dir and loaded: what the
// library-level decoding tests (TranslatorPool, the server's scheduler) translate with.
inline std::vector<Model> load_six_word_model(const std::string& dir) {
  write_model_dir(dir, {"a", "dog", "runs", "the", "cat", "sleeps"}, {"ein", "hund", "läuft", "die", "katze", "schläft"},
                  -20.0f);
  return load_ensemble({dir});
}

// Replaces the "tokenizer" part of dir's config.json (to make it look like a model of another
// kind or age).
inline void set_tokenizer_json(const std::string& dir, const nlohmann::json& tokenizer) {
  const std::string path = model_file(dir, "config.json");
  nlohmann::json config = read_json_file(path);
  config["tokenizer"] = tokenizer;
  write_json_file(path, config);
}

}  // namespace rnnsearch::test
