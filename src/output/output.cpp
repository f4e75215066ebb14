#include "rnnsearch/output/output.h"

#include <cmath>
#include <sstream>

#include "rnnsearch/decode/alternatives.h"
#include "rnnsearch/error.h"
#include "rnnsearch/output/heatmap.h"
#include "rnnsearch/text/tokenizer.h"

namespace rnnsearch {

AlignmentFormat parse_alignment_format(const std::string& name) {
  if (name == "none") return AlignmentFormat::none;
  if (name == "soft") return AlignmentFormat::soft;
  if (name == "hard") return AlignmentFormat::hard;
  throw Error("--alignment must be none, soft or hard, not '" + name + "'");
}

std::string alignment_text(const Alignment& alignment, AlignmentFormat format) {
  switch (format) {
    case AlignmentFormat::soft:
      return soft_alignment_text(alignment);
    case AlignmentFormat::hard:
      return pharaoh_alignment(alignment);
    case AlignmentFormat::none:
      break;
  }
  return "";
}

bool parse_format_is_json(const std::string& name) {
  if (name != "text" && name != "json") throw Error("--format must be text or json, not '" + name + "'");
  return name == "json";
}

OutputPrinter::OutputPrinter(const OutputOptions& options) : options_(options) {}

TranslationRecord OutputPrinter::record(const LineTranslation& translation, const Hypothesis& hypothesis) {
  // The labels of the alignment: pieces with --alignment-units pieces, else tokens.
  return {translation.line, translation.source_pieces.empty() ? translation.source : translation.source_pieces,
          hypothesis.target_pieces.empty() ? hypothesis.words : hypothesis.target_pieces, hypothesis.score,
          hypothesis.alignment, alternative_word(hypothesis)};
}

TranslationRecord OutputPrinter::record(const ScoredPair& pair) {
  return {pair.line, pair.source_pieces.empty() ? pair.source : pair.source_pieces,
          pair.target_pieces.empty() ? pair.target : pair.target_pieces, pair.score, pair.alignment, {}};
}

std::string OutputPrinter::hypothesis_line(const LineTranslation& t, const Hypothesis& h) const {
  if (options_.json) return record_json(record(t, h));
  std::string line = output_text(h.words, options_.tokenizer, options_.detokenize);
  if (options_.alignment != AlignmentFormat::none && h.alignment.rows > 0)
    line += " ||| " + alignment_text(h.alignment, options_.alignment);
  if (options_.n_best > 0) {
    std::ostringstream score;
    score << h.score;
    line = std::to_string(t.line) + " ||| " + line + " ||| " + score.str();
  }
  if (const AlternativeWord alternative = alternative_word(h); alternative.position >= 0) {
    std::ostringstream probability;
    probability << alternative.probability;
    line += " ||| " + alternative.word + " " + probability.str();
  }
  return line;
}

void OutputPrinter::print(std::ostream& out, const LineTranslation& translation) const {
  static const std::vector<Hypothesis> kUntranslated(1);
  for (const Hypothesis& h : translation.hypotheses.empty() ? kUntranslated : translation.hypotheses)
    out << hypothesis_line(translation, h) << '\n';
}

// perplexity = exp(−logprob / (target tokens + 1)), </s> counted
void OutputPrinter::print(std::ostream& out, const ScoredPair& pair) const {
  if (options_.json) {
    out << record_json(record(pair)) << '\n';
    return;
  }
  if (pair.scored()) {
    out << pair.log_prob << ' ' << std::exp(-pair.log_prob / static_cast<double>(pair.target.size() + 1));
    if (options_.ranking_score) out << ' ' << pair.score;
    if (options_.alignment != AlignmentFormat::none) out << " ||| " << alignment_text(pair.alignment, options_.alignment);
  }
  out << '\n';
}

void HeatmapCollector::offer(const TranslationRecord& record) {
  if (!full()) records_.push_back(record);
}

std::string HeatmapCollector::write(const std::string& dir) const { return write_heatmaps(dir, records_); }

}  // namespace rnnsearch
