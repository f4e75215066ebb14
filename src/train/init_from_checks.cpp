#include "rnnsearch/train/init_from_checks.h"

#include <filesystem>
#include <optional>

#include "rnnsearch/error.h"
#include "rnnsearch/train/train_options.h"

namespace rnnsearch {
namespace {

// The model --init-from's weights come from: their directory (symlinks resolved), when it holds
// config.json and both vocabularies; nothing for weights alone.
struct ModelBeside {
  std::string dir;
  ModelDefinition model;
};
std::optional<ModelBeside> model_beside(const std::string& weights) {
  const std::string dir = std::filesystem::weakly_canonical(weights).parent_path().string();
  for (const char* name : {model_files::kConfig, model_files::kSrcVocab, model_files::kTgtVocab})
    if (!std::filesystem::exists(model_file(dir, name))) return std::nullopt;
  try {
    return ModelBeside{dir, load_model_definition(dir)};
  } catch (const Error& e) {
    throw Error("--init-from " + weights + ": " + e.what());
  }
}

[[noreturn]] void refuse_init_from(const std::string& weights, const std::string& file, const std::string& problem) {
  throw Error(located(file, 0, "--init-from " + weights + ": " + problem));
}

}  // namespace

void check_init_from_options(const std::string& weights, const TrainOptions& o) {
  const std::optional<ModelBeside> from = model_beside(weights);
  if (!from) return;
  const std::string config = model_file(from->dir, model_files::kConfig);
  // Options that leave every tensor's shape as it is but change what the weights compute
  for (const char* name : {"enc-type", "skip"}) {
    const TrainOptionSpec& spec = *find_train_option(name);
    const std::string had = model_option_text(spec, from->model.config), asked = model_option_text(spec, o.model);
    if (had != asked)
      refuse_init_from(weights, config, std::string("its model has --") + name + " " + had + ", this run " + asked);
  }
  // and the text the embeddings were learnt on
  const TokenizerOptions& text = from->model.tokenizer;
  if (text.kind != o.tokenizer.kind || text.lowercase != o.tokenizer.lowercase)
    refuse_init_from(weights, config,
                     std::string("its model reads --tokenizer ") + tokenizer_kind_name(text.kind) +
                         (text.lowercase ? " (lowercased)" : "") + " text, this run " +
                         tokenizer_kind_name(o.tokenizer.kind) + (o.tokenizer.lowercase ? " (lowercased)" : ""));
}

void check_init_from_text(const std::string& weights, const ModelDefinition& model, const std::string& dir) {
  const std::optional<ModelBeside> from = model_beside(weights);
  if (!from) return;
  // Embedding row k is token k of the vocabulary the weights were trained with, and a
  // subword vocabulary's tokens are its subword model's pieces
  for (const char* name : {model_files::kSrcSubwords, model_files::kTgtSubwords})
    if (!same_model_file(from->dir, dir, name))
      refuse_init_from(weights, model_file(from->dir, name), "its model cuts words into other subword units than this run's");
  if (!(from->model.src_vocab == model.src_vocab) || !(from->model.tgt_vocab == model.tgt_vocab))
    refuse_init_from(weights,
                     model_file(from->dir, from->model.src_vocab == model.src_vocab ? model_files::kTgtVocab
                                                                                     : model_files::kSrcVocab),
                     "its model has other vocabularies than this run's: give this run --vocab-src " +
                         model_file(from->dir, model_files::kSrcVocab) + " --vocab-tgt " +
                         model_file(from->dir, model_files::kTgtVocab));
}

}  // namespace rnnsearch
