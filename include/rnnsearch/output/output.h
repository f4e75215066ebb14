#pragma once
// The output printer of `translate` and `score` (as Marian's OutputPrinter): one place that
// turns decoding results into lines, so both commands print the same formats.
//
//   translate, text:    "translation[ ||| alignment]"
//   translate, n-best:  "i ||| translation[ ||| alignment] ||| score"   (Moses/Marian style)
//   ... alternatives:   "i ||| translation[ ||| alignment] ||| score ||| word probability"
//                       (the n-best lines of --alternatives K: the word where each parts)
//   score, text:        "logprob perplexity[ score][ ||| alignment]"   (empty when not scored;
//                       score, the ranking score, with ranking_score)
//   json (both):        record_json, one object per line (score null when not scored; for
//                       score, the ranking score, which is logprob unless ranking options say)
//
// and the --heatmaps collector.
#include <ostream>
#include <string>
#include <vector>

#include "rnnsearch/decode/scorer.h"
#include "rnnsearch/decode/translator.h"
#include "rnnsearch/output/alignment.h"
#include "rnnsearch/text/tokenizer.h"

namespace rnnsearch {

// --alignment none|soft|hard
enum class AlignmentFormat { none, soft, hard };
AlignmentFormat parse_alignment_format(const std::string& name);  // throws rnnsearch::Error
// soft: soft_alignment_text; hard: pharaoh_alignment (</s> row excluded); none: "".
std::string alignment_text(const Alignment& alignment, AlignmentFormat format);

struct OutputOptions {
  int n_best = 0;  // translate: 0 = the 1-best only, as plain text (the K of --alternatives too)
  AlignmentFormat alignment = AlignmentFormat::none;
  bool json = false;        // --format json (else text)
  bool detokenize = false;  // translate: join word-level output tokens into text (output_text)
  bool ranking_score = false;  // score: print ScoredPair::score after the perplexity
  TokenizerOptions tokenizer;  // the model's: raw-text models' words are text already
  // Whether decoding must keep attention matrices for this output (heatmaps aside).
  bool needs_alignment() const { return alignment != AlignmentFormat::none || json; }
};

// Throws rnnsearch::Error unless name is text or json.
bool parse_format_is_json(const std::string& name);

class OutputPrinter {
 public:
  explicit OutputPrinter(const OutputOptions& options);

  // One line per hypothesis (n-best) or the 1-best. A line that was not translated (empty
  // or not UTF-8) stands as one empty hypothesis of score 0, so every format keeps one
  // entry per input line.
  void print(std::ostream& out, const LineTranslation& translation) const;
  void print(std::ostream& out, const ScoredPair& pair) const;

  // The record that JSON and heatmaps show.
  static TranslationRecord record(const LineTranslation& translation, const Hypothesis& hypothesis);
  static TranslationRecord record(const ScoredPair& pair);

 private:
  std::string hypothesis_line(const LineTranslation& translation, const Hypothesis& hypothesis) const;

  OutputOptions options_;
};

// The records of --heatmaps: the first `limit` sentences offered, so that translating a
// large file leaves a heatmap directory of bounded size.
class HeatmapCollector {
 public:
  explicit HeatmapCollector(size_t limit) : limit_(limit) {}
  bool full() const { return records_.size() >= limit_; }  // no need to build more records
  void offer(const TranslationRecord& record);
  // write_heatmaps into dir; returns the path of index.html.
  std::string write(const std::string& dir) const;

 private:
  size_t limit_;
  std::vector<TranslationRecord> records_;
};

}  // namespace rnnsearch
