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

#include "rnnsearch/align/reading.h"
#include "rnnsearch/decode/hypothesis.h"
#include "rnnsearch/decode/scorer.h"
#include "rnnsearch/model/model_io.h"

namespace rnnsearch::align {

// The reading of links (AlignMethod, read_links, pair_links, ...) and AlignedPair:
// align/reading.h, shared with the model-free HMM aligner.

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
