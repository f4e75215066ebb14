#pragma once
// Validation during training (docs/design.md §4): the per-token cross-entropy of the
// validation pairs (perplexity = exp of it) and, with the bleu or chrf metrics, the BLEU or
// chrF of their translations (beam search, as `translate` runs it) against the references,
// all lines included, as `rnnsearch bleu` scores them. Word-level models compare tokens as the
// model sees them: the references tokenized (and lowercased) as the training text, BLEU
// multi-bleu.perl's (`rnnsearch bleu --tokenize multi30k`). Raw-text models compare their
// text with the raw references, BLEU sacreBLEU's default (13a, cased). chrF is sacreBLEU's
// chrF2 (whitespace does not count in it). The first metric of --valid-metrics picks
// model.best.npz and drives --patience.
#include <limits>
#include <string>
#include <vector>

#include "rnnsearch/model/model_io.h"
#include "rnnsearch/train/sharded_model.h"

namespace rnnsearch {

enum class ValidMetric { cross_entropy, bleu, chrf };
// "cross-entropy,bleu,chrf" -> {cross_entropy, bleu, chrf}; throws rnnsearch::Error on unknown names.
std::vector<ValidMetric> parse_valid_metrics(const std::string& names);

struct ValidationScores {
  double cross_entropy = std::numeric_limits<double>::quiet_NaN();  // per target token (piece)
  double bleu = std::numeric_limits<double>::quiet_NaN();           // x100, when measured
  double chrf = std::numeric_limits<double>::quiet_NaN();           // x100, when measured
  // What model selection minimises: the cross-entropy, −BLEU or −chrF.
  double cost(ValidMetric metric) const {
    return metric == ValidMetric::bleu ? -bleu : metric == ValidMetric::chrf ? -chrf : cross_entropy;
  }
};

class Validator {
 public:
  // corpus: the validation pairs as ids; the raw files are read again for BLEU and chrF.
  Validator(const std::vector<ValidMetric>& metrics, const std::string& src_path, const std::string& tgt_path,
            const TokenizerOptions& tokenizer, int beam_size, int batch_size, int threads,
            const ParallelCorpus& corpus);

  ValidationScores run(const ModelDefinition& model, const Parameters<float>& params, ShardedModel& shards) const;

 private:
  // The 1-best translation of every validation source, its tokens joined by spaces.
  std::vector<std::string> translate(const ModelDefinition& model, const Parameters<float>& params) const;

  bool raw_text_;
  bool bleu_ = false, chrf_ = false;
  int beam_size_, batch_size_, threads_;
  const ParallelCorpus& corpus_;
  std::vector<std::string> sources_;                  // raw lines
  std::vector<std::string> references_;  // tokens joined by spaces; raw lines for raw-text models
};

}  // namespace rnnsearch
