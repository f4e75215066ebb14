#include "rnnsearch/decode/translator.h"

#include <omp.h>

#include <algorithm>
#include <exception>

#include "rnnsearch/error.h"
#include "rnnsearch/eval/heatmap.h"
#include "rnnsearch/text/tokenizer.h"

namespace rnnsearch {

Translator::Translator(const Model& model, const TranslatorOptions& options) : model_(model), options_(options) {
  check_beam_options(options.beam);
  if (options.batch_size < 1) throw Error("--batch-size must be at least 1");
  if (options.max_length < 1) throw Error("--max-length must be at least 1");
  const int threads = std::max(1, options.threads);
  searches_.reserve(threads);
  for (int t = 0; t < threads; ++t) searches_.emplace_back(model.params);
}

// Tokens and ids (</s> appended; unknown words become <unk>) of one line. Lines without
// tokens get no ids and are not decoded.
LineTranslation Translator::prepare(const std::string& text, size_t line, std::vector<int>& ids) const {
  LineTranslation result;
  result.line = line;
  if (!is_valid_utf8(text)) {
    result.warning = "invalid UTF-8; its output line is empty";
    return result;
  }
  result.source = tokenize(text, model_.tokenizer);
  const size_t max_length = static_cast<size_t>(options_.max_length);
  if (result.source.size() > max_length) {
    result.warning = std::to_string(result.source.size()) + " tokens, cut to the first " +
                     std::to_string(max_length) + " (--max-length)";
    result.source.resize(max_length);
  }
  if (!result.source.empty()) ids = model_.src_vocab.encode(result.source);
  return result;
}

std::vector<LineTranslation> Translator::translate(const std::vector<std::string>& lines, size_t first_line) {
  std::vector<LineTranslation> results;
  std::vector<std::vector<int>> ids(lines.size());
  std::vector<size_t> order;  // the lines to decode, longest first
  for (size_t k = 0; k < lines.size(); ++k) {
    results.push_back(prepare(lines[k], first_line + k, ids[k]));
    if (!ids[k].empty()) order.push_back(k);
  }
  // Longest first: similar lengths share a batch, and the slowest batches start first so
  // the threads finish together.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ids[a].size() > ids[b].size(); });
  const size_t batch_size = static_cast<size_t>(options_.batch_size);
  const long batches = static_cast<long>((order.size() + batch_size - 1) / batch_size);
  std::exception_ptr error;
  // One batch alone runs outside a parallel region, so Eigen may use the threads itself.
#pragma omp parallel for schedule(dynamic, 1) num_threads(static_cast<int>(searches_.size())) if (batches > 1)
  for (long k = 0; k < batches; ++k) {
    try {
      const size_t begin = k * batch_size, end = std::min(order.size(), begin + batch_size);
      std::vector<std::vector<int>> sources;
      for (size_t i = begin; i < end; ++i) sources.push_back(ids[order[i]]);
      auto hypotheses = searches_[omp_get_thread_num()].search(sources, options_.beam);
      for (size_t i = begin; i < end; ++i) results[order[i]].hypotheses = std::move(hypotheses[i - begin]);
    } catch (...) {  // an exception must not leave the parallel region
#pragma omp critical(rnnsearch_translate_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  return results;
}

TranslationRecord make_record(const LineTranslation& translation, const Hypothesis& hypothesis,
                              const Vocab& target_vocab) {
  TranslationRecord record;
  record.line = translation.line;
  record.source = translation.source;
  record.target = target_vocab.decode(hypothesis.tokens);
  record.score = hypothesis.score;
  record.alignment = hypothesis.alignment;
  return record;
}

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

void HeatmapCollector::offer(const TranslationRecord& record) {
  if (!full()) records_.push_back(record);
}

std::string HeatmapCollector::write(const std::string& dir) const { return write_heatmaps(dir, records_); }

}  // namespace rnnsearch
