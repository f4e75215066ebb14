#pragma once
// What decoding returns for one sentence: its hypotheses, each with the attention matrix
// that produced it. Plain data, shared by the decoders (beam search, forced decoding) and
// the output printer (output/output.h).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "rnnsearch/util/mpi.h"

namespace rnnsearch {

// Soft alignment: rows = target tokens including </s>, columns = source tokens including
// </s>; row i is the attention distribution of output step i (sums to 1).
struct Alignment {
  int rows = 0, cols = 0;
  std::vector<float> weights;  // rows*cols, row-major
  float at(int i, int j) const { return weights[static_cast<size_t>(i) * cols + j]; }
};

struct Hypothesis {
  std::vector<int> tokens;  // target ids, without </s>
  std::vector<std::string> words;  // the tokens as whole words (filled by Translator)
  std::vector<std::string> target_pieces;  // with piece alignments: the alignment's rows
  bool finished = false;    // ended with </s>; false: cut at the maximum output length
  double log_prob = 0;      // Σ log p(y_i | y_<i, x) over the tokens and </s> if finished
  double score = 0;         // log_prob / length^normalize
  // --alternatives: where this hypothesis parts from the others, the first token after the
  // target prefix (its index in tokens; Translator makes it the index in words: words.size()
  // when it is </s>), and that token's log p(w | prefix, x). −1 and 0 otherwise.
  int alternative = -1;
  double alternative_log_prob = 0;
  // With lexical constraints (--constraints): bit i set when it holds phrase i.
  uint64_t constraints_met = 0;
  // (tokens + 1) × (source length with </s>): row i is the attention of output step i. The
  // last row is that of </s>; for a hypothesis cut at the length limit, the attention of
  // the step that would have come next.
  Alignment alignment;
};

// Hypotheses and alignments as messages between the ranks of an MPI job.
void write_alignment(mpi::Writer& message, const Alignment& alignment);
void read_alignment(mpi::Reader& message, Alignment& alignment);
void write_hypotheses(mpi::Writer& message, const std::vector<Hypothesis>& hypotheses);
void read_hypotheses(mpi::Reader& message, std::vector<Hypothesis>& hypotheses);

// The alignment of words from that of their subword pieces (docs/design.md §3): a source
// word's column is the sum of its pieces' columns, a target word's row the mean of its
// pieces' rows, so rows still sum to 1. The last row and column (</s>) stay as they are.
// *_word_of_piece: each piece's word index (0 .. *_words-1).
Alignment word_alignment(const Alignment& pieces, const std::vector<int>& target_word_of_piece, int target_words,
                         const std::vector<int>& source_word_of_piece, int source_words);

}  // namespace rnnsearch
