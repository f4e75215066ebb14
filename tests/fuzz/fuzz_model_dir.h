#pragma once
// A complete tiny model directory in the scratch directory (vocabularies, config.json and a
// committed checkpoint set), into which a target then writes one fuzzed file.
#include "../support/fixtures.h"
#include "fuzz_input.h"
#include "rnnsearch/model/model_io.h"
#include "rnnsearch/model/parameters.h"
#include "rnnsearch/text/vocab.h"
#include "rnnsearch/train/checkpoint.h"
#include "rnnsearch/train/optimizer.h"

namespace rnnsearch::fuzz {

inline ModelConfig tiny_model_config() { return test::tiny_config(7, 8); }  // 4 specials + 3 or 4 words

inline std::string tiny_model_dir() {
  const std::string dir = scratch().path("model");
  std::filesystem::create_directories(dir);
  Vocab::build({{"a", "b", "c"}}, 1).save(model_file(dir, model_files::kSrcVocab));
  Vocab::build({{"x", "y", "z", "w"}}, 1).save(model_file(dir, model_files::kTgtVocab));
  const ModelConfig config = tiny_model_config();
  write_json_file(model_file(dir, model_files::kConfig), model_config_json(config, TokenizerOptions{}, {}));
  Parameters<float> params(config);
  params.init_uniform(0.1, 1);
  Optimizer optimizer(OptimizerOptions{}, params.values().size());
  CheckpointSet(dir).save(params, optimizer, Progress{});
  return dir;
}

}  // namespace rnnsearch::fuzz
