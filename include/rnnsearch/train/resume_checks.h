#pragma once
// What a resumed run may not change: the model of its config.json and the text side of it
// (tokenizer, vocabularies, subword models).
#include <string>

#include "rnnsearch/model/model_io.h"
#include "rnnsearch/train/trainer.h"

namespace rnnsearch {

// What a resumed run may not change is the table's on_resume (train_options.h).
//
// A resumed run keeps the model of its config.json (config_path): a model option the command
// line gives (options.options_given) must agree with it, or the run would go on as another
// model than the one asked for without a word (as when a script's default changes). Throws
// rnnsearch::Error, one line naming config_path and the option.
void check_resumed_model(const TrainOptions& options, const ModelConfig& run, const std::string& config_path);

// A resumed run keeps the text side of its model: its tokenizer, vocabularies and subword
// models. Throws rnnsearch::Error (one line naming config.json, or the given vocabulary file)
// when the command line asks for another: --tokenizer, or, when given, --no-lowercase,
// --vocab-src/--vocab-tgt with other contents, or an option that made the vocabularies
// (on_resume words, subwords or words_or_subwords: --min-count, --subwords, --subword-type,
// --subwords-separate, --subwords-sample) with another value than config.json's "training" records.
void check_resumed_text(const TrainOptions& options, const ModelDefinition& model, const std::string& dir);

}  // namespace rnnsearch
