#pragma once
// Word alignments of sentence pairs by forced decoding (`rnnsearch align`, Python's
// Translator.align, the server's POST /align; docs/aligning.md): the Scorer's attention of
// each pair (decode/scorer.h), of one model (source→target) or of two (a reverse model
// target→source, scored on the swapped pairs), read as links.
//
// The words are the models' tokens: for `--tokenizer raw` models the whitespace-separated
// words of the input (subword pieces merged back into them), for `words` models the
// tokenizer's tokens (lowercased, punctuation split off: "T-shirt," is t - shirt ,).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rnnsearch/align/links.h"
#include "rnnsearch/decode/hypothesis.h"
#include "rnnsearch/decode/scorer.h"
#include "rnnsearch/model/model_io.h"

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

// The links of one pair: of its forward matrix alone (reverse null), or with a reverse
// direction's (source words + 1) × (target words + 1) matrix: averaged with the forward's
// (method.average), or each read and their links combined by `symmetrize` (resolved as
// resolved_symmetrization does). The matrices must fit each other.
Links pair_links(const Alignment& forward, const Alignment* reverse, const AlignMethod& method,
                 std::optional<Symmetrization> symmetrize);

// "SOURCE ||| TARGET" (fast_align's input) into its two sides, the token "|||" between white
// space. Throws rnnsearch::Error "FILE:LINE: no ' ||| ' ..." when the line has none.
void split_parallel_line(const std::string& line, std::string& source, std::string& target, const std::string& file,
                         size_t line_number);

// --symmetrize resolved for one model or two: with two and a method that does not average,
// the given one or grow-diag-final-and; else none. Throws rnnsearch::Error when they do not
// fit (average or symmetrize with one model, both with two).
std::optional<Symmetrization> resolved_symmetrization(bool two_models, const AlignMethod& method,
                                                      std::optional<Symmetrization> symmetrize);

struct AlignerOptions {
  int batch_size = 32;   // pairs scored together
  int max_length = 200;  // pairs with a side longer than this many words are skipped
  int threads = 1;       // batches scored at once
  AlignMethod method;
  // Two models, argmax or threshold: how the directions' links are combined (default
  // grow-diag-final-and, as fast_align's and eflomal's users run atools). Refused otherwise.
  std::optional<Symmetrization> symmetrize;
  // Models with an alignment output (model/alignment_output.h) are read through it, unless this
  // is set: then their attention is read (--raw-attention).
  bool raw_attention = false;
};

struct AlignedPair {
  size_t line = 0;                          // 0-based input line
  std::vector<std::string> source, target;  // the words the links point at
  Links links;
  std::string warning;                      // why it was not aligned; "" if fine
  bool aligned = false;                     // false: no links (empty output line) and a warning
  bool target_side = false;                 // the warning is about the target line (which file to name)
};

class Aligner {
 public:
  // forward: the source→target model(s) (several: an ensemble, their attention averaged as
  // score's); reverse: the target→source ones, or none. Keeps references to both. Throws
  // rnnsearch::Error on options that do not fit them (resolved_symmetrization; models reading
  // other kinds of text).
  Aligner(const std::vector<Model>& forward, const std::vector<Model>& reverse, const AlignerOptions& options);
  ~Aligner();

  // The method and symmetrization of later align() calls (the server's per request), checked
  // and resolved as the constructor does with those of its options.
  void set_reading(const AlignMethod& method, std::optional<Symmetrization> symmetrize);

  // src_lines[k] and tgt_lines[k] (same count) are input line first_line + k. finished(n),
  // when given, is told of pairs as they are done (from any thread). Pairs are aligned in
  // chunks of kChunk, their matrices dropped once read, so memory does not grow with the input.
  std::vector<AlignedPair> align(const std::vector<std::string>& src_lines, const std::vector<std::string>& tgt_lines,
                                 size_t first_line, const std::function<void(size_t pairs)>& finished = nullptr);
  static constexpr size_t kChunk = 1024;

  bool two_directions() const { return reverse_ != nullptr; }
  const AlignerOptions& options() const { return options_; }

 private:
  AlignedPair links_of(ScoredPair& forward, ScoredPair* reverse) const;

  AlignerOptions options_;
  std::unique_ptr<Scorer> forward_, reverse_;
};

}  // namespace rnnsearch::align
