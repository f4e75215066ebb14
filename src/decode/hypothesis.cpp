#include "rnnsearch/decode/hypothesis.h"

namespace rnnsearch {

namespace {

// The fields of a message, in order: written from a const Hypothesis by an mpi::Writer, read
// into a Hypothesis by an mpi::Reader.
template <typename Message, typename A>
void alignment_fields(Message& message, A& alignment) {
  message(alignment.rows)(alignment.cols)(alignment.weights);
}

template <typename Message, typename H>
void hypothesis_fields(Message& message, H& h) {
  message(h.tokens)(h.words)(h.target_pieces)(h.finished)(h.log_prob)(h.score)(h.alternative)(h.alternative_log_prob)(h.constraints_met);
  alignment_fields(message, h.alignment);
}

}  // namespace

void write_alignment(mpi::Writer& message, const Alignment& alignment) { alignment_fields(message, alignment); }
void read_alignment(mpi::Reader& message, Alignment& alignment) { alignment_fields(message, alignment); }

void write_hypotheses(mpi::Writer& message, const std::vector<Hypothesis>& hypotheses) {
  message.put(hypotheses.size());
  for (const Hypothesis& h : hypotheses) hypothesis_fields(message, h);
}

void read_hypotheses(mpi::Reader& message, std::vector<Hypothesis>& hypotheses) {
  size_t count = 0;
  message.get(count);
  hypotheses.resize(count);
  for (Hypothesis& h : hypotheses) hypothesis_fields(message, h);
}

Alignment word_alignment(const Alignment& pieces, const std::vector<int>& target_word_of_piece, int target_words,
                         const std::vector<int>& source_word_of_piece, int source_words) {
  if (pieces.rows == 0) return pieces;
  Alignment words;
  words.rows = target_words + 1;
  words.cols = source_words + 1;
  words.weights.assign(static_cast<size_t>(words.rows) * words.cols, 0.0f);
  std::vector<int> pieces_in_row(words.rows, 0);
  // Piece row i belongs to target word row_of(i), piece column j to source word col_of(j);
  // the last row/column (</s>) maps to the last.
  auto row_of = [&](int i) { return i + 1 == pieces.rows ? target_words : target_word_of_piece[i]; };
  auto col_of = [&](int j) { return j + 1 == pieces.cols ? source_words : source_word_of_piece[j]; };
  for (int i = 0; i < pieces.rows; ++i) {
    const int r = row_of(i);
    ++pieces_in_row[r];
    for (int j = 0; j < pieces.cols; ++j) words.weights[static_cast<size_t>(r) * words.cols + col_of(j)] += pieces.at(i, j);
  }
  for (int r = 0; r < words.rows; ++r)
    for (int c = 0; c < words.cols; ++c)
      if (pieces_in_row[r] > 1) words.weights[static_cast<size_t>(r) * words.cols + c] /= static_cast<float>(pieces_in_row[r]);
  return words;
}

}  // namespace rnnsearch
