#pragma once
// Links read off an attention matrix, and the results of aligning a pair: the plain types and
// pure functions that the neural aligner (align/aligner.h) and the model-free HMM aligner
// (align/hmm.h, align/hmm_tables.h) share. No model, no scorer.
#include <optional>
#include <string>
#include <vector>

#include "rnnsearch/align/links.h"
#include "rnnsearch/decode/hypothesis.h"

namespace rnnsearch::align {

// How links are read off an attention matrix (--method):
//   argmax                each target word → its most attended source word (the leftmost of
//                         equal weights), no link when that is </s>;
//   threshold:X           every (source word, target word) cell of weight ≥ X (0 < X ≤ 1);
//   average, average-threshold:X   with two models: the same on the mean of the forward
//                         matrix and the reverse one's transposed.
// With two models, argmax and threshold read each direction (the reverse one: each source
// word → its most attended target word) and symmetrize their links.
struct AlignMethod {
  bool threshold = false;  // else argmax
  double weight = 0;       // the threshold's X
  bool average = false;
};
// Throws rnnsearch::Error naming the choices.
AlignMethod parse_align_method(const std::string& name);
std::string align_method_name(const AlignMethod& method);

// The links of one attention matrix (target words + 1) × (source words + 1), rows target
// words and </s>, columns source words and </s>, read by method (its `average` aside): never
// a link of the </s> row or column.
Links read_links(const Alignment& attention, const AlignMethod& method);
// Rows become columns: a reverse model's matrix (source + 1) × (target + 1) as the forward's.
Alignment transposed(const Alignment& attention);
// Source-target links as target-source ones (and back).
Links swapped(const Links& links);

// One matrix read by its columns: each source word → its most weighted target word (the
// topmost of equal weights), no link when that is the </s> row or when its weight is below
// kColumnFloor (a source word no target word looks at stays unaligned). A column's weights
// are not a distribution, so the floor is absolute: 0.1, chosen on the RWTH development set
// for the alignment output (docs/aligning.md: 0 / 0.05 / 0.1 / 0.2 gave 26.6 / 25.8 / 25.7 / 26.0).
constexpr float kColumnFloor = 0.1f;
Links column_links(const Alignment& attention);

// The links of one pair: of its forward matrix alone (reverse null), or with a reverse
// direction's (source words + 1) × (target words + 1) matrix: averaged with the forward's
// (method.average), or each read and their links combined by `symmetrize` (resolved as
// resolved_symmetrization does). With one matrix (no reverse, or the average) and
// `symmetrize`, its rows (read_links, argmax) and its columns (column_links) are the two
// directions symmetrized. The matrices must fit each other.
Links pair_links(const Alignment& forward, const Alignment* reverse, const AlignMethod& method,
                 std::optional<Symmetrization> symmetrize);

// "SOURCE ||| TARGET" (fast_align's input) into its two sides, the token "|||" between white
// space. Throws rnnsearch::Error "FILE:LINE: no ' ||| ' ..." when the line has none.
void split_parallel_line(const std::string& line, std::string& source, std::string& target, const std::string& file,
                         size_t line_number);

// --symmetrize resolved for one model or two: with two and a method that does not average,
// the given one or grow-diag-final-and; else the given one (one matrix read both ways) or
// none. Throws rnnsearch::Error when they do not fit (average with one model; symmetrize of
// one matrix with a threshold, whose rows and columns are the same cells).
std::optional<Symmetrization> resolved_symmetrization(bool two_models, const AlignMethod& method,
                                                      std::optional<Symmetrization> symmetrize);

struct AlignedPair {
  size_t line = 0;                          // 0-based input line
  std::vector<std::string> source, target;  // the words the links point at
  Links links;
  std::string warning;                      // why it was not aligned; "" if fine
  bool aligned = false;                     // false: no links (empty output line) and a warning
  bool target_side = false;                 // the warning is about the target line (which file to name)
};

}  // namespace rnnsearch::align
