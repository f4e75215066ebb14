#include "rnnsearch/decode/scorer.h"

#include <algorithm>

#include "rnnsearch/decode/decode_options.h"
#include "rnnsearch/decode/parallel_batches.h"
#include "rnnsearch/error.h"
#include "rnnsearch/model/products.h"
#include "rnnsearch/text/pair_problem.h"
#include "rnnsearch/text/tokenizer.h"
#include "rnnsearch/util/checks.h"

namespace rnnsearch {

Scorer::Scorer(const ModelDefinition& model, const std::vector<const Parameters<float>*>& models,
               const ScorerOptions& options)
    : model_(model), models_(models), options_(options), workspaces_(std::max(1, options.threads)) {
  if (models.empty()) throw Error("scoring needs a model");
  check_at_least("batch-size", options.batch_size, 1);
  check_at_least("max-length", options.max_length, 1);
  check_beam_options(options.ranking);
}

size_t alignment_outputs(const std::vector<const Parameters<float>*>& models) {
  return static_cast<size_t>(std::count_if(models.begin(), models.end(), [](const Parameters<float>* params) {
    return params->config().alignment_output > 0;
  }));
}

double ranking_score(const BeamOptions& ranking, const ScoredPair& pair) {
  if (!pair.scored()) return std::numeric_limits<double>::quiet_NaN();
  return ranking_score(ranking, pair.log_prob, static_cast<int>(pair.tgt_ids.size()), pair.coverage);
}

// Tokens and ids of one pair, or the reason it is not scored (text/pair_problem.h).
ScoredPair Scorer::prepare(const std::string& src_line, const std::string& tgt_line, size_t line) const {
  ScoredPair pair;
  pair.line = line;
  const PairProblem problem =
      pair_problem(src_line, tgt_line, static_cast<size_t>(options_.max_length),
                   [&](const std::string& text) { return tokenize(text, model_.tokenizer); }, pair.source, pair.target);
  if (!problem.warning.empty()) {
    pair.warning = problem.warning;
    pair.target_side = problem.target_side;
    return pair;
  }
  std::vector<std::string> src_pieces = model_.src_subwords.encode(pair.source, &pair.source_word_of_piece);
  std::vector<std::string> tgt_pieces = model_.tgt_subwords.encode(pair.target, &pair.target_word_of_piece);
  pair.src_ids = model_.src_vocab.encode(src_pieces);
  pair.tgt_ids = model_.tgt_vocab.encode(tgt_pieces);
  if (options_.piece_alignments) {
    pair.source_pieces = std::move(src_pieces);
    pair.target_pieces = std::move(tgt_pieces);
  }
  return pair;
}

// rnnsearch_forward leaves −log p of every non-padding target position in token_nll
// (time-major row i*B + b in out_rows) and the attention of step i of sentence b in alpha
// row i*B + b. The coverage reads the pieces' attention, before any merging into words.
void Scorer::score_batch(const std::vector<size_t>& members, std::vector<ScoredPair>& pairs,
                         ModelWorkspace<float>& ws) {
  std::vector<std::vector<int>> src, tgt;
  std::vector<uint32_t> ids;
  for (size_t k : members) {
    src.push_back(pairs[k].src_ids);
    tgt.push_back(pairs[k].tgt_ids);
    ids.push_back(static_cast<uint32_t>(k));
  }
  const Batch batch = pad_batch(src, tgt, ids);
  const int B = batch.size;
  std::vector<std::vector<double>> attention_sums(B);  // Σ_i a_ij of each pair, for its coverage
  for (int b = 0; b < B; ++b) {
    ScoredPair& pair = pairs[members[b]];
    pair.log_prob = 0;
    attention_sums[b].assign(static_cast<size_t>(batch.src_lengths[b]), 0.0);
    if (options_.alignment)
      pair.alignment = {batch.tgt_lengths[b], batch.src_lengths[b],
                        std::vector<float>(static_cast<size_t>(batch.tgt_lengths[b]) * batch.src_lengths[b], 0.0f)};
  }
  // An ensemble's log-probability and attention are the means of its models'.
  const double weight = 1.0 / static_cast<double>(models_.size());
  // The alignment shown is the mean of the alignment outputs of the models that have one, or
  // (none has, or raw_attention) of their attention.
  const size_t with_output = options_.ranking.raw_attention ? 0 : alignment_outputs(models_);
  const double alignment_weight = 1.0 / static_cast<double>(with_output > 0 ? with_output : models_.size());
  for (const Parameters<float>* params : models_) {
    rnnsearch_forward<float>(*params, batch, Regularization{}, ws);
    std::vector<double> log_probs(B, 0.0);
    for (size_t k = 0; k < ws.out_rows.size(); ++k) log_probs[ws.out_rows[k] % B] -= ws.token_nll[k];
    const bool output = with_output > 0 && params->config().alignment_output > 0;
    const MatCRef<float> shown = output ? rnnsearch_alignment_output<float>(*params, batch, ws, false)
                                        : MatCRef<float>(ws.alpha.topRows(ws.tgt_len * B));
    const bool shows = options_.alignment && (with_output == 0 || output);
    for (int b = 0; b < B; ++b) {
      ScoredPair& pair = pairs[members[b]];
      pair.log_prob += weight * log_probs[b];
      for (int i = 0; i < batch.tgt_lengths[b]; ++i)
        for (int j = 0; j < batch.src_lengths[b]; ++j)
          attention_sums[b][j] += weight * ws.alpha(static_cast<Index>(i) * B + b, j);
      if (!shows) continue;
      for (int i = 0; i < pair.alignment.rows; ++i)
        for (int j = 0; j < pair.alignment.cols; ++j)
          pair.alignment.weights[static_cast<size_t>(i) * pair.alignment.cols + j] +=
              static_cast<float>(alignment_weight) * shown(static_cast<Index>(i) * B + b, j);
    }
  }
  for (int b = 0; b < B; ++b) {
    ScoredPair& pair = pairs[members[b]];
    pair.coverage = coverage_term(attention_sums[b]);
    pair.score = ranking_score(options_.ranking, pair);
  }
  if (!options_.alignment || options_.piece_alignments || !model_.uses_subwords()) return;
  for (size_t k : members) {
    ScoredPair& pair = pairs[k];
    pair.alignment = word_alignment(pair.alignment, pair.target_word_of_piece, static_cast<int>(pair.target.size()),
                                    pair.source_word_of_piece, static_cast<int>(pair.source.size()));
  }
}

std::vector<ScoredPair> Scorer::score(const std::vector<std::string>& src_lines,
                                      const std::vector<std::string>& tgt_lines, size_t first_line,
                                      const std::function<void(size_t pairs)>& finished) {
  std::vector<ScoredPair> pairs;
  std::vector<size_t> order;  // the pairs to score, longest first
  for (size_t k = 0; k < src_lines.size(); ++k) {
    pairs.push_back(prepare(src_lines[k], tgt_lines[k], first_line + k));
    if (pairs.back().scored()) order.push_back(k);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_pair(pairs[a].src_ids.size(), pairs[a].tgt_ids.size()) >
           std::make_pair(pairs[b].src_ids.size(), pairs[b].tgt_ids.size());
  });
  if (finished) finished(pairs.size() - order.size());
  const size_t batch_size =
      balanced_batch_size(order.size(), static_cast<size_t>(options_.batch_size), static_cast<int>(workspaces_.size()));
  run_batches(order, batch_size, static_cast<int>(workspaces_.size()), [&](const std::vector<size_t>& members, int thread) {
    const InvariantProducts invariant(options_.ranking.batch_invariant);
    score_batch(members, pairs, workspaces_[thread]);
    if (finished) finished(members.size());
  });
  share_batch_results(
      order, batch_size,
      [&](mpi::Writer& message, size_t k) {
        message.put(pairs[k].log_prob);
        message.put(pairs[k].coverage);
        message.put(pairs[k].score);
        write_alignment(message, pairs[k].alignment);
      },
      [&](mpi::Reader& message, size_t k) {
        message.get(pairs[k].log_prob);
        message.get(pairs[k].coverage);
        message.get(pairs[k].score);
        read_alignment(message, pairs[k].alignment);
      });
  return pairs;
}

}  // namespace rnnsearch
