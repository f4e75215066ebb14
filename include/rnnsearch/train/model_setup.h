#pragma once
// The definition of a new training run's model, written into its directory before the
// first update: vocabularies built from the training data (or given with --vocab-src /
// --vocab-tgt), sizes from the options, and config.json with the training settings.
#include <string>

#include "rnnsearch/model/model_io.h"
#include "rnnsearch/train/trainer.h"

namespace rnnsearch {

// Writes vocab.src, vocab.tgt and config.json into dir; throws rnnsearch::Error on bad input.
// Its stages (learning subword models, counting vocabularies) show on `progress`.
ModelDefinition create_model_definition(const TrainOptions& options, const std::string& dir, ProgressMeter& progress);

}  // namespace rnnsearch
