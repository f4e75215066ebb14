#pragma once
// --init-from WEIGHTS: that the model the weights come from is one this run can start from.
#include <string>

#include "rnnsearch/model/model_io.h"
#include "rnnsearch/train/trainer.h"

namespace rnnsearch {

// --init-from WEIGHTS, when their directory (symlinks resolved) holds the model they come from
// (config.json and vocabularies; weights alone are checked by shape as they load). Both throw
// rnnsearch::Error, one line naming that model's file that differs. Before this run's
// definition is made: the options that keep every shape but change what the weights compute
// (--enc-type, --skip) and the tokenizer must be the run's.
void check_init_from_options(const std::string& weights, const TrainOptions& options);
// After it (model, in dir): the subword models and vocabularies (embedding row k is token k).
void check_init_from_text(const std::string& weights, const ModelDefinition& model, const std::string& dir);

}  // namespace rnnsearch
