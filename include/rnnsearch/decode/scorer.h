#pragma once
// Forced decoding of given sentence pairs (what `rnnsearch score` runs): teacher forcing
// through the training computation with dropout off, giving per pair
//
//   log p(y | x) = Σ_i log p(y_i | y_<i, x)   over the target tokens and </s>
//
// and, on request, the alignment matrix of every target step: the model's alignment output
// when it has one (model/alignment_output.h; the mean over an ensemble's models that have one),
// else, or with ranking.raw_attention, its attention; and the score translate's beam
// search would rank the target by (decode/beam_search.h: ranking_score, with the options of
// ScorerOptions::ranking; log p itself unless they say otherwise), for reranking. Pairs are
// batched by length and batches run in parallel as in Translator.
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "rnnsearch/decode/beam_search.h"
#include "rnnsearch/decode/hypothesis.h"
#include "rnnsearch/model/model_io.h"
#include "rnnsearch/model/rnnsearch.h"

namespace rnnsearch {

// How many of the models have an alignment output.
size_t alignment_outputs(const std::vector<const Parameters<float>*>& models);

// Beam options that rank by log-probability alone (normalize 0, no penalty).
inline BeamOptions log_prob_ranking() {
  BeamOptions options;
  options.normalize = 0;
  return options;
}

struct ScorerOptions {
  int batch_size = 32;    // pairs per batch
  int max_length = 200;   // pairs with a longer side are skipped, not cut
  int threads = 1;        // batches scored at once
  bool alignment = false; // keep each pair's attention matrix
  bool piece_alignments = false;  // --alignment-units pieces: of the subword pieces, not words
  // What ScoredPair::score ranks by: the ranking options score takes (decode_options.h), as
  // translate takes them (the rest is not read); by default none, so that score = log_prob.
  BeamOptions ranking = log_prob_ranking();
};

// The result for one pair of lines. A pair that is not scored (empty side, not UTF-8, too
// long) has no ids, a warning, and a NaN log_prob.
struct ScoredPair {
  size_t line = 0;                            // 0-based input line number
  std::vector<std::string> source, target;    // tokens
  std::vector<int> src_ids, tgt_ids;          // of the subword pieces, with </s>; empty: not scored
  std::vector<int> source_word_of_piece, target_word_of_piece;  // each piece's token index
  std::vector<std::string> source_pieces, target_pieces;       // with piece alignments
  std::string warning;                        // why it was not scored; "" if fine
  bool target_side = false;                   // the warning is about the target line (which file to name)
  double log_prob = std::numeric_limits<double>::quiet_NaN();
  // coverage_term of its attention over the pieces, </s> row and column included (what the
  // coverage penalty reads), and ranking_score under ScorerOptions::ranking
  double coverage = std::numeric_limits<double>::quiet_NaN();
  double score = std::numeric_limits<double>::quiet_NaN();
  Alignment alignment;                        // (target+1) × (source+1) tokens, when requested
  bool scored() const { return !src_ids.empty(); }
};

// What beam search would rank the pair's target by under these options (its length counts
// </s>, as a finished hypothesis'); NaN when the pair is not scored.
double ranking_score(const BeamOptions& ranking, const ScoredPair& pair);

class Scorer {
 public:
  // Keeps references to the model's definition and the weights of each model of the
  // ensemble; an ensemble's log-probability and attention are the means of its models'.
  // Throws rnnsearch::Error on invalid options.
  Scorer(const ModelDefinition& model, const std::vector<const Parameters<float>*>& models,
         const ScorerOptions& options);

  // src_lines[k] and tgt_lines[k] (same count) are input line first_line + k. finished(n),
  // when given, is told of pairs as they are done (from any thread): those left unscored
  // first, then each batch of this process.
  std::vector<ScoredPair> score(const std::vector<std::string>& src_lines, const std::vector<std::string>& tgt_lines,
                                size_t first_line, const std::function<void(size_t pairs)>& finished = nullptr);

 private:
  ScoredPair prepare(const std::string& src_line, const std::string& tgt_line, size_t line) const;
  void score_batch(const std::vector<size_t>& members, std::vector<ScoredPair>& pairs, ModelWorkspace<float>& ws);

  const ModelDefinition& model_;
  std::vector<const Parameters<float>*> models_;
  ScorerOptions options_;
  std::vector<ModelWorkspace<float>> workspaces_;  // one per thread
};

}  // namespace rnnsearch
