#pragma once
// The training corpus of a run: mapped from the model directory's corpus cache (corpus.bin),
// or read from the text and binarized there first.
#include <string>

#include "rnnsearch/model/model_io.h"
#include "rnnsearch/text/corpus.h"
#include "rnnsearch/train/train_log.h"
#include "rnnsearch/train/trainer.h"

namespace rnnsearch {

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
