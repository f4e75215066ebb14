#pragma once
// Validation during training (docs/design.md §4): the per-token cross-entropy of the
// validation pairs (perplexity = exp of it) and, with the bleu metric, the BLEU of their
// translations (beam search, as `translate` runs it) against the tokenized references, all
// lines included. The first metric of --valid-metrics picks model.best.npz and drives
// --patience.
#include <limits>
#include <string>
#include <vector>

#include "rnnsearch/model/model_io.h"
#include "rnnsearch/train/sharded_model.h"

namespace rnnsearch {

enum class ValidMetric { cross_entropy, bleu };
// "cross-entropy,bleu" -> {cross_entropy, bleu}; throws rnnsearch::Error on unknown names.
std::vector<ValidMetric> parse_valid_metrics(const std::string& names);

struct ValidationScores {
  double cross_entropy = std::numeric_limits<double>::quiet_NaN();  // per target token (piece)
  double bleu = std::numeric_limits<double>::quiet_NaN();           // x100, when measured
  // What model selection minimises: the cross-entropy, or −BLEU.
  double cost(ValidMetric metric) const { return metric == ValidMetric::bleu ? -bleu : cross_entropy; }
};

class Validator {
 public:
  // corpus: the validation pairs as ids; the raw files are read again for BLEU.
  Validator(const std::vector<ValidMetric>& metrics, const std::string& src_path, const std::string& tgt_path,
            const TokenizerOptions& tokenizer, int beam_size, int batch_size, int threads,
            const ParallelCorpus& corpus);

  ValidationScores run(const ModelDefinition& model, const Parameters<float>& params, ShardedModel& shards) const;

 private:
  double bleu(const ModelDefinition& model, const Parameters<float>& params) const;

  bool bleu_ = false;
  int beam_size_, batch_size_, threads_;
  const ParallelCorpus& corpus_;
  std::vector<std::string> sources_;                  // raw lines
  std::vector<std::vector<std::string>> references_;  // tokenized lines
};

}  // namespace rnnsearch
