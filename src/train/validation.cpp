#include "rnnsearch/train/validation.h"

#include "rnnsearch/decode/translator.h"
#include "rnnsearch/error.h"
#include "rnnsearch/metrics/bleu.h"
#include "rnnsearch/metrics/chrf.h"
#include "rnnsearch/text/batcher.h"
#include "rnnsearch/text/line_reader.h"
#include "rnnsearch/text/tokenizer.h"
#include "rnnsearch/util/mpi.h"
#include "rnnsearch/util/name_list.h"

namespace rnnsearch {

std::vector<ValidMetric> parse_valid_metrics(const std::string& names) {
  return parse_name_list<ValidMetric>(
      "--valid-metrics", names,
      {{"cross-entropy", ValidMetric::cross_entropy}, {"bleu", ValidMetric::bleu}, {"chrf", ValidMetric::chrf}});
}

Validator::Validator(const std::vector<ValidMetric>& metrics, const std::string& src_path,
                     const std::string& tgt_path, const TokenizerOptions& tokenizer, int beam_size, int batch_size,
                     int threads, const ParallelCorpus& corpus)
    : raw_text_(tokenizer.kind == TokenizerKind::raw),
      beam_size_(beam_size),
      batch_size_(batch_size),
      threads_(threads),
      corpus_(corpus) {
  for (ValidMetric metric : metrics) {
    bleu_ |= metric == ValidMetric::bleu;
    chrf_ |= metric == ValidMetric::chrf;
  }
  if (!bleu_ && !chrf_) return;
  sources_ = read_lines(src_path);
  for (const std::string& line : read_lines(tgt_path))
    references_.push_back(raw_text_ ? line : join_tokens(tokenize(line, tokenizer)));
}

ValidationScores Validator::run(const ModelDefinition& model, const Parameters<float>& params,
                                ShardedModel& shards) const {
  ValidationScores scores;
  double cost = 0;
  long tokens = 0;
  for (const auto& ids : make_batches(corpus_, batch_size_, false, 0)) {
    cost += shards.run(params, corpus_, ids, {});
    tokens += ShardedModel::target_tokens(corpus_, ids);
  }
  mpi::sum(&cost, 1);  // the ranks' parts
  scores.cross_entropy = cost / static_cast<double>(tokens);
  if (!bleu_ && !chrf_) return scores;
  const std::vector<std::string> hypotheses = translate(model, params);
  if (bleu_) {
    // Raw text: sacreBLEU's default (13a, cased). Tokens: multi-bleu.perl's (tokenizer none).
    BleuOptions options;
    if (!raw_text_) {
      options.tokenizer = BleuTokenizer::none;
      options.smoothing = BleuSmoothing::none;
    }
    scores.bleu = corpus_bleu(hypotheses, {references_}, options).bleu;
  }
  if (chrf_) scores.chrf = corpus_chrf(hypotheses, {references_}).score;
  return scores;
}

std::vector<std::string> Validator::translate(const ModelDefinition& model, const Parameters<float>& params) const {
  TranslatorOptions options;
  options.beam.beam_size = beam_size_;
  options.threads = threads_;
  Translator translator(model, {&params}, options);
  std::vector<std::string> hypotheses;
  for (const LineTranslation& t : translator.translate(sources_, 0))
    hypotheses.push_back(t.hypotheses.empty() ? "" : join_tokens(t.hypotheses.front().words));
  return hypotheses;
}

}  // namespace rnnsearch
