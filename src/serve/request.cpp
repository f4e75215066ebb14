// The requests of `rnnsearch serve` (request.h): parsing and validation of the JSON bodies
// of POST /translate, /score and /align. Takes no lock.
#include "rnnsearch/serve/request.h"

#include <climits>
#include <set>

#include <nlohmann/json.hpp>

#include "rnnsearch/decode/decode_options.h"
#include "rnnsearch/decode/steering.h"
#include "rnnsearch/error.h"

namespace rnnsearch::serve {

using nlohmann::json;

namespace {

// The parsed body: an object whose fields are all among `known`.
json parse_object(const std::string& body, const std::set<std::string>& known) {
  if (!is_valid_utf8(body)) throw RequestError(400, "the body is not valid UTF-8");
  json value;
  try {
    value = json::parse(body);
  } catch (const json::exception& e) {
    throw RequestError(400, std::string("malformed JSON: ") + e.what());
  }
  if (!value.is_object()) throw RequestError(400, "the body must be a JSON object");
  for (const auto& field : value.items())
    if (!known.count(field.key())) throw RequestError(400, "unknown field '" + field.key() + "'");
  return value;
}

// "text" or ["text", ...]: the sentences, and whether they came as a list.
std::vector<std::string> sentences_of(const json& body, const std::string& field, int max_sentences, bool& list) {
  if (!body.contains(field)) throw RequestError(400, "'" + field + "' is missing");
  const json& value = body[field];
  list = value.is_array();
  if (value.is_string()) return {value.get<std::string>()};
  if (!list) throw RequestError(400, "'" + field + "' must be a string or a list of strings");
  if (value.size() > static_cast<size_t>(max_sentences))
    throw RequestError(413, "'" + field + "' holds " + std::to_string(value.size()) + " sentences; the limit is " +
                                std::to_string(max_sentences) + " (--max-sentences)");
  std::vector<std::string> sentences;
  for (const json& item : value) {
    if (!item.is_string()) throw RequestError(400, "'" + field + "' must be a string or a list of strings");
    sentences.push_back(item.get<std::string>());
  }
  return sentences;
}

bool bool_field(const json& body, const std::string& field) {
  if (!body.contains(field)) return false;
  if (!body[field].is_boolean()) throw RequestError(400, "'" + field + "' must be true or false");
  return body[field].get<bool>();
}

AlignmentFormat alignment_field(const json& body) {
  if (!body.contains("alignment")) return AlignmentFormat::none;
  const json& value = body["alignment"];
  if (value.is_string()) {
    const std::string name = value.get<std::string>();
    if (name == "none" || name == "hard" || name == "soft") return parse_alignment_format(name);
  }
  throw RequestError(400, "'alignment' must be \"none\", \"hard\" or \"soft\"");
}

// The decoding options `use` takes, from their JSON fields: the table's (decode/decode_options.h,
// beam_size for --beam-size; null = not given), checked by its rules and max_beam_size. A value
// it refuses is a 400 with the command line's text.
BeamOptions decode_fields(const json& body, DecodeUse use, int max_beam_size) {
  try {
    return given_decode_options(
               use,
               [&](const DecodeOptionSpec& spec) -> std::optional<double> {
                 const std::string field = spec.keyword();
                 if (!body.contains(field) || body[field].is_null()) return std::nullopt;
                 if (!body[field].is_number()) throw RequestError(400, "'" + field + "' must be a number");
                 return body[field].get<double>();
               },
               max_beam_size)
        .beam;
  } catch (const Error& e) {
    throw RequestError(400, e.what());
  }
}

// The fields a request may hold: its own, and the decoding options `use` takes.
std::set<std::string> known_fields(std::set<std::string> fields, DecodeUse use) {
  for (const DecodeOptionSpec& spec : decode_option_specs())
    if (spec.takes(use)) fields.insert(spec.keyword());
  return fields;
}

void max_tokens_check(const std::string& text, const std::string& field, const RequestLimits& limits) {
  if (!is_valid_utf8(text)) throw RequestError(400, field + " is not valid UTF-8");
  const size_t tokens = tokenize(text, limits.tokenizer).size();
  if (tokens > static_cast<size_t>(limits.max_tokens))
    throw RequestError(413, field + " has " + std::to_string(tokens) + " tokens; the limit is " +
                                std::to_string(limits.max_tokens) + " (--max-tokens)");
}

// "src" and "tgt" of /score and /align: both strings or lists of the same length, each within
// --max-tokens.
void pair_fields(const json& body, const RequestLimits& limits, std::vector<std::string>& src,
                 std::vector<std::string>& tgt, bool& list) {
  bool tgt_list = false;
  src = sentences_of(body, "src", limits.max_sentences, list);
  tgt = sentences_of(body, "tgt", limits.max_sentences, tgt_list);
  if (list != tgt_list || src.size() != tgt.size())
    throw RequestError(400, "'src' and 'tgt' must both be strings or lists of the same length");
  for (size_t k = 0; k < src.size(); ++k) {
    const std::string index = list ? "[" + std::to_string(k) + "]" : "";
    max_tokens_check(src[k], "src" + index, limits);
    max_tokens_check(tgt[k], "tgt" + index, limits);
  }
}

// A string field parsed by `parse` (which throws rnnsearch::Error for a bad name: 400).
template <class Parse>
auto name_field(const json& body, const std::string& field, Parse parse) {
  if (!body[field].is_string()) throw RequestError(400, "'" + field + "' must be a string");
  try {
    return parse(body[field].get<std::string>());
  } catch (const Error& e) {
    throw RequestError(400, "'" + field + "': " + e.what());
  }
}

}  // namespace

TranslateRequest parse_translate_request(const std::string& body, const RequestLimits& limits) {
  const json value = parse_object(
      body, known_fields({"q", "alignment", "replace_unk", "detokenize", "heatmap", "target_prefix", "constraints", "avoid"},
                         DecodeUse::translate));
  TranslateRequest request;
  request.sentences = sentences_of(value, "q", limits.max_sentences, request.list);
  for (size_t k = 0; k < request.sentences.size(); ++k)
    max_tokens_check(request.sentences[k], request.list ? "q[" + std::to_string(k) + "]" : "q", limits);
  SteeringLists steering;  // the fields' shapes read here; what they hold is checked by sentence_steering
  if (value.contains("target_prefix")) {  // shaped as "q": a string, or a list of the same length
    bool list = false;
    steering.target_prefix = sentences_of(value, "target_prefix", limits.max_sentences, list);
    if (list != request.list || steering.target_prefix->size() != request.sentences.size())
      throw RequestError(400, "'q' and 'target_prefix' must both be strings or lists of the same length");
    for (size_t k = 0; k < steering.target_prefix->size(); ++k)
      max_tokens_check((*steering.target_prefix)[k], list ? "target_prefix[" + std::to_string(k) + "]" : "target_prefix",
                       limits);
  }
  // "constraints", "avoid": a sentence's phrases are a list of strings; for a list "q", a list
  // of as many such lists. A sentence's phrases of each field hold at most --max-tokens tokens
  // in all (the work of a step grows with them).
  for (const char* field : {"constraints", "avoid"}) {
    if (!value.contains(field)) continue;
    const std::string name = field;
    const json& phrases = value[field];
    const auto shape = [&] {
      return RequestError(400, "'" + name + "' must be a list of strings" +
                                   (request.list ? ", one list per sentence of 'q'" : "") + " (as 'q' is a " +
                                   (request.list ? "list)" : "string)"));
    };
    auto& lists = (name == "constraints" ? steering.constraints : steering.avoid).emplace(request.sentences.size());
    const auto strings = [&](const json& list, size_t k) {
      if (!phrase_list(list, lists[k])) throw shape();
      std::string all;  // (the phrases' tokens are those of their text joined by spaces)
      for (const std::string& text : lists[k]) all += text + " ";
      max_tokens_check(all, name + (request.list ? "[" + std::to_string(k) + "]" : ""), limits);
    };
    if (!request.list) {
      strings(phrases, 0);
      continue;
    }
    if (!phrases.is_array() || phrases.size() != request.sentences.size()) throw shape();
    for (size_t k = 0; k < phrases.size(); ++k) strings(phrases[k], k);
  }
  request.beam = decode_fields(value, DecodeUse::translate, limits.max_beam_size);
  // Each sentence's steering checked as translate checks a line's (a refusal names the sentence).
  try {
    request.steering = sentence_steering(request.sentences.size(), std::move(steering), request.beam, request.list ? "q" : "");
  } catch (const Error& e) {
    throw RequestError(400, e.what());
  }
  request.alignment = alignment_field(value);
  request.replace_unk = bool_field(value, "replace_unk");
  request.detokenize = bool_field(value, "detokenize");
  request.heatmap = bool_field(value, "heatmap");
  return request;
}

ScoreRequest parse_score_request(const std::string& body, const RequestLimits& limits) {
  const json value = parse_object(body, known_fields({"src", "tgt", "alignment"}, DecodeUse::score));
  ScoreRequest request;
  pair_fields(value, limits, request.src, request.tgt, request.list);
  request.alignment = alignment_field(value);
  request.ranking = decode_fields(value, DecodeUse::score, INT_MAX);
  return request;
}

AlignRequest parse_align_request(const std::string& body, const RequestLimits& limits, bool two_models,
                                 bool hmm_tables) {
  const json value = parse_object(body, {"src", "tgt", "method", "symmetrize", "aligner"});
  AlignRequest request;
  pair_fields(value, limits, request.src, request.tgt, request.list);
  if (value.contains("aligner")) {
    request.hmm = name_field(value, "aligner", [](const std::string& name) {
      if (name != "model" && name != "hmm") throw Error("must be model or hmm, not '" + name + "'");
      return name == "hmm";
    });
    if (request.hmm && !hmm_tables)
      throw RequestError(422, "\"aligner\": \"hmm\" needs HMM tables: this server has none (serve --hmm-tables DIR)");
  }
  if (value.contains("method")) request.method = name_field(value, "method", align::parse_align_method);
  if (value.contains("symmetrize"))
    request.symmetrize = name_field(value, "symmetrize", align::parse_symmetrization);
  try {
    // the HMM tables are two directions, as two models are
    request.symmetrize = align::resolved_symmetrization(two_models || request.hmm, request.method, request.symmetrize);
  } catch (const Error& e) {
    throw RequestError(422, e.what());
  }
  return request;
}

}  // namespace rnnsearch::serve
