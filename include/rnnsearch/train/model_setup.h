#pragma once
// The definition of a new training run's model, written into its directory before the
// first update: vocabularies built from the training data (or given with --vocab-src /
// --vocab-tgt), sizes from the options, and config.json with the training settings.
#include <string>

#include "rnnsearch/model/model_io.h"
#include "rnnsearch/text/corpus.h"
#include "rnnsearch/train/train_log.h"
#include "rnnsearch/train/trainer.h"

namespace rnnsearch {

// Writes vocab.src, vocab.tgt and config.json into dir; throws rnnsearch::Error on bad input.
// Its stages (learning subword models, counting vocabularies) show on `progress`.
ModelDefinition create_model_definition(const TrainOptions& options, const std::string& dir, ProgressMeter& progress);

// A resumed run keeps the model of its config.json (config_path): a model option the command
// line gives (options.options_given) must agree with it, or the run would go on as another
// model than the one asked for without a word (as when a script's default changes). Throws
// rnnsearch::Error, one line naming config_path and the option.
void check_resumed_model(const TrainOptions& options, const ModelConfig& run, const std::string& config_path);

// A resumed run keeps the text side of its model: its tokenizer, vocabularies and subword
// models. Throws rnnsearch::Error (one line naming config.json, or the given vocabulary file)
// when the command line asks for another: --tokenizer, or, when given, --no-lowercase,
// --min-count, --subwords, --subword-type, --subwords-separate, --subwords-sample,
// --vocab-src/--vocab-tgt with other contents.
void check_resumed_text(const TrainOptions& options, const ModelDefinition& model, const std::string& dir);

// --init-from WEIGHTS, when their directory (symlinks resolved) holds the model they come from
// (config.json and vocabularies; weights alone are checked by shape as they load). Both throw
// rnnsearch::Error, one line naming that model's file that differs. Before this run's
// definition is made: the options that keep every shape but change what the weights compute
// (--enc-type, --skip) and the tokenizer must be the run's.
void check_init_from_options(const std::string& weights, const TrainOptions& options);
// After it (model, in dir): the subword models and vocabularies (embedding row k is token k).
void check_init_from_text(const std::string& weights, const ModelDefinition& model, const std::string& dir);

// What dir's corpus cache (corpus.bin) must have been made from: the training files (path,
// size, modification time), the vocabularies and subword models in dir (their CRC-32), the
// tokenizer, --max-length and the --guided-alignment file. Throws rnnsearch::Error naming a training file that is missing.
std::string corpus_cache_key(const TrainOptions& options, const std::string& dir, const TokenizerOptions& tokenizer);

// The training corpus, memory-mapped from dir's corpus.bin when that holds this corpus,
// otherwise read from the text and binarized there first (logging why). Only rank 0 of an
// MPI job uses the file: the other ranks read their text, so that the check that every rank
// reads the same corpus (docs/design.md §7) still compares what each would train on.
ParallelCorpus training_corpus(const TrainOptions& options, const std::string& dir, const ModelDefinition& model,
                               TrainLog& log, ProgressMeter& progress);

}  // namespace rnnsearch
