// The response bodies of `rnnsearch serve` (response.h): the JSON of /translate, /score,
// /align and /info, and of errors. Takes no lock.
#include "rnnsearch/serve/response.h"

#include <cmath>

#include "rnnsearch/decode/decode_options.h"
#include "rnnsearch/decode/scorer.h"
#include "rnnsearch/kernels/precision.h"
#include "rnnsearch/output/alignment.h"
#include "rnnsearch/output/heatmap.h"
#include "rnnsearch/output/output.h"
#include "rnnsearch/serve/service.h"
#include "rnnsearch/util/cpu.h"

namespace rnnsearch::serve {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// The decoding options /translate and /score take (decode/decode_options.h), each with its
// JSON name, the command line's, its type, range (null: unbounded), defaults per use (null: off
// unless given) and help: what the page builds its controls from.
ordered_json decode_options_json() {
  ordered_json options = ordered_json::array();
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    const auto number = [&](double value) {
      if (!std::isfinite(value) || (spec.optional && value < 0)) return ordered_json(nullptr);
      return spec.integer ? ordered_json(static_cast<long long>(value)) : ordered_json(value);
    };
    ordered_json defaults = ordered_json::object();
    for (const auto& [use, name] : {std::pair{DecodeUse::translate, "translate"}, std::pair{DecodeUse::score, "score"}})
      if (spec.takes(use)) defaults[name] = number(spec.default_value(use));
    options.push_back({{"name", spec.keyword()},
                       {"option", std::string("--") + spec.name},
                       {"type", spec.integer ? "integer" : "number"},
                       {"minimum", number(spec.minimum)},
                       {"maximum", number(spec.maximum)},
                       {"defaults", std::move(defaults)},
                       {"help", spec.help}});
  }
  return options;
}

// The hard alignment (the pairs `translate --alignment hard` prints, </s> row excluded) as
// [[s, t], ...].
ordered_json pairs_of(const Alignment& alignment) {
  ordered_json pairs = ordered_json::array();
  for (const auto& [source, target] : hard_alignment(alignment)) pairs.push_back({source, target});
  return pairs;
}

// The tokens, score and attention of `translate --format json` or `score --format json`
// for one record, and the alignment in the requested form.
ordered_json record_fields(const TranslationRecord& record, AlignmentFormat format) {
  ordered_json fields = record_object(record);
  if (format == AlignmentFormat::hard)
    fields["alignment"] = pairs_of(record.alignment);
  else if (format == AlignmentFormat::none)
    fields.erase("alignment");
  return fields;
}

}  // namespace

ordered_json translate_json(const TranslateRequest& request, const std::vector<LineTranslation>& results,
                            const TokenizerOptions& tokenizer) {
  // The text of one hypothesis, as translate prints it (OutputPrinter).
  const auto text_of = [&](const Hypothesis& h) { return output_text(h.words, tokenizer, request.detokenize); };
  ordered_json translations = ordered_json::array();
  for (const LineTranslation& t : results) {
    ordered_json entry;
    entry["translation"] = t.hypotheses.empty() ? "" : text_of(t.hypotheses.front());
    entry["score"] = t.hypotheses.empty() ? 0.0 : t.hypotheses.front().score;
    entry["source"] = t.source_pieces.empty() ? t.source : t.source_pieces;
    ordered_json hypotheses = ordered_json::array();
    for (const Hypothesis& h : t.hypotheses) {
      const TranslationRecord record = OutputPrinter::record(t, h);
      ordered_json fields = record_fields(record, request.alignment);
      ordered_json hypothesis;
      hypothesis["translation"] = text_of(h);
      hypothesis["target"] = fields["target"];
      hypothesis["score"] = fields["score"];
      if (fields.contains("alignment")) hypothesis["alignment"] = fields["alignment"];
      if (fields.contains("alternative")) hypothesis["alternative"] = fields["alternative"];
      if (request.heatmap) hypothesis["heatmap_svg"] = heatmap_svg(record);
      hypotheses.push_back(std::move(hypothesis));
    }
    entry["hypotheses"] = std::move(hypotheses);
    if (!t.warning.empty()) entry["warning"] = t.warning;
    translations.push_back(std::move(entry));
  }
  return {{"translations", std::move(translations)}};
}

// log_prob, perplexity and score as `score` prints them: perplexity = exp(−logprob / (tokens +
// 1)), score the ranking score (log_prob unless the request gave ranking fields).
ordered_json score_json(const ScoreRequest& request, const std::vector<ScoredPair>& pairs) {
  ordered_json scores = ordered_json::array();
  for (const ScoredPair& pair : pairs) {
    ordered_json fields = record_fields(OutputPrinter::record(pair), request.alignment);
    ordered_json entry;
    entry["log_prob"] = pair.scored() ? ordered_json(pair.log_prob) : ordered_json(nullptr);
    entry["perplexity"] = pair.scored()
                              ? ordered_json(std::exp(-pair.log_prob / static_cast<double>(pair.target.size() + 1)))
                              : ordered_json(nullptr);
    entry["score"] = pair.scored() ? fields["score"] : ordered_json(nullptr);
    entry["source"] = fields["source"];
    entry["target"] = fields["target"];
    if (fields.contains("alignment") && pair.scored()) entry["alignment"] = fields["alignment"];
    if (!pair.warning.empty()) entry["warning"] = pair.warning;
    scores.push_back(std::move(entry));
  }
  return {{"scores", std::move(scores)}};
}

ordered_json align_json(const std::vector<align::AlignedPair>& pairs) {
  ordered_json alignments = ordered_json::array();
  for (const align::AlignedPair& pair : pairs) {
    ordered_json links = ordered_json::array();
    for (const align::Link& link : pair.links) links.push_back({link.source, link.target});
    ordered_json entry;
    entry["source"] = pair.source;
    entry["target"] = pair.target;
    entry["links"] = std::move(links);
    if (!pair.warning.empty()) entry["warning"] = pair.warning;
    alignments.push_back(std::move(entry));
  }
  return {{"alignments", std::move(alignments)}};
}

namespace {

// Each model's weights file, parameter count and sizes.
ordered_json model_entries(const std::vector<Model>& models) {
  ordered_json entries = ordered_json::array();
  for (const Model& model : models) {
    json config = model.config;
    entries.push_back({{"weights", model.weights_path},
                       {"parameters", model.params.values().size()},
                       {"config", config}});
  }
  return entries;
}

}  // namespace

ordered_json info_json(const std::vector<Model>& models, const std::vector<Model>& reverse,
                       const ServiceOptions& options) {
  const Model& model = models.front();
  return {{"version", options.version},
          {"models", model_entries(models)},
          {"reverse_models", model_entries(reverse)},
          {"ensemble", models.size() > 1},
          {"source_vocabulary", model.src_vocab.size()},
          {"target_vocabulary", model.tgt_vocab.size()},
          {"subwords", model.uses_subwords()},
          // alignments and heatmaps come from the models' alignment output (unless raw_attention)
          {"alignment_output", alignment_outputs(ensemble_weights(models)) > 0},
          {"hmm_tables", !options.hmm_tables.empty()},  // POST /align takes "aligner": "hmm"
          {"lowercase", model.tokenizer.lowercase},
          {"precision", precision_name(options.precision)},
          {"cpu", describe(cpu_features())},
          {"batching", {{"batch_size", options.batch_size}, {"batch_wait_ms", options.batch_wait_ms},
                        {"threads", options.threads}}},
          {"options", decode_options_json()},
          {"limits", {{"max_sentences", options.max_sentences}, {"max_tokens", options.max_tokens},
                      {"max_beam_size", options.max_beam_size}, {"timeout_ms", options.timeout_ms},
                      {"max_queue", options.max_queue}}}};
}

std::string json_body(const ordered_json& value) {
  return value.dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

std::string error_body(const std::string& message) { return json_body(ordered_json{{"error", message}}); }

}  // namespace rnnsearch::serve
