#include "rnnsearch/train/model_setup.h"

#include <nlohmann/json.hpp>

#include "rnnsearch/error.h"
#include "rnnsearch/text/corpus.h"

namespace rnnsearch {
namespace {

// config.json's "training": what the run was started with, for the record.
nlohmann::json training_json(const TrainOptions& o) {
  return {{"train_src", o.train_src},
          {"train_tgt", o.train_tgt},
          {"valid_src", o.valid_src},
          {"valid_tgt", o.valid_tgt},
          {"batch_size", o.batch_size},
          {"optimizer", o.optimizer.kind == OptimizerKind::adam ? "adam" : "sgd"},
          {"lr", o.optimizer.lr},
          {"clip_norm", o.clip_norm},
          {"embedding_dropout", o.regularization.embedding_dropout},
          {"output_dropout", o.regularization.output_dropout},
          {"label_smoothing", o.regularization.label_smoothing},
          {"seed", o.seed},
          {"shuffle", o.shuffle},
          {"min_count", o.min_count},
          {"max_length", o.max_length}};
}

}  // namespace

ModelDefinition create_model_definition(const TrainOptions& o, const std::string& dir) {
  if (!o.vocab_src.empty() != !o.vocab_tgt.empty()) throw Error("--vocab-src and --vocab-tgt go together");
  ModelDefinition model;
  model.tokenizer = o.tokenizer;
  model.src_vocab = o.vocab_src.empty() ? Vocab::build(read_tokenized(o.train_src, o.tokenizer), o.min_count)
                                        : Vocab::load(o.vocab_src);
  model.tgt_vocab = o.vocab_tgt.empty() ? Vocab::build(read_tokenized(o.train_tgt, o.tokenizer), o.min_count)
                                        : Vocab::load(o.vocab_tgt);
  model.config = o.model;
  model.config.src_vocab = static_cast<int>(model.src_vocab.size());
  model.config.tgt_vocab = static_cast<int>(model.tgt_vocab.size());
  model.src_vocab.save(model_file(dir, model_files::kSrcVocab));
  model.tgt_vocab.save(model_file(dir, model_files::kTgtVocab));
  write_json_file(model_file(dir, model_files::kConfig), model_config_json(model.config, o.tokenizer, training_json(o)));
  return model;
}

}  // namespace rnnsearch
