// The request bodies of `rnnsearch serve` (docs/serve.md): the functions the HTTP routes of
// POST /translate, /score and /align call on the body (serve/request.h), with the limits
// TranslationService gives them (ServiceOptions' defaults) and a model's tokenizer. No model,
// no file, no HTTP. The first byte picks the route and the tokenizer:
//   bit 0: /translate (0) or /score (1); bit 1: words (0) or raw (1); bit 2: lowercase;
//   bit 3: /align instead, bit 4: with a reverse model;
// the rest is the body. RequestError (a 4xx or 503 and its message) is the documented refusal;
// its answer must be the JSON {"error": message} the route sends. Anything else (another
// exception, such as nlohmann's, which the route would turn into a 500) is a finding, as is an
// accepted request outside the limits, one the decoder's check_beam_options refuses, or one
// whose steering translate would refuse (check_steering).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "rnnsearch/decode/decode_options.h"
#include "rnnsearch/decode/steering.h"
#include "rnnsearch/error.h"
#include "rnnsearch/serve/request.h"
#include "rnnsearch/serve/response.h"
#include "rnnsearch/serve/service.h"

using namespace rnnsearch;
using namespace rnnsearch::serve;

namespace {

void check(bool condition) {
  if (!condition) std::abort();
}

// Every sentence within --max-tokens of the tokenizer (and valid UTF-8, which tokenize needs).
void check_sentence(const std::string& text, const RequestLimits& limits) {
  check(is_valid_utf8(text));
  check(tokenize(text, limits.tokenizer).size() <= static_cast<size_t>(limits.max_tokens));
}

// The src/tgt pairs of /score and /align: as many of each, within the limits.
void check_pairs(const std::vector<std::string>& src, const std::vector<std::string>& tgt, bool list,
                 const RequestLimits& limits) {
  check(src.size() == tgt.size());
  check(src.size() <= static_cast<size_t>(limits.max_sentences));
  check(list || src.size() == 1);
  for (size_t k = 0; k < src.size(); ++k) {
    check_sentence(src[k], limits);
    check_sentence(tgt[k], limits);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const ServiceOptions defaults;
  RequestLimits limits{defaults.max_sentences, defaults.max_tokens, defaults.max_beam_size, {}};
  const bool score = data[0] & 1, align = data[0] & 8, two_models = data[0] & 16;
  limits.tokenizer.kind = data[0] & 2 ? TokenizerKind::raw : TokenizerKind::words;
  limits.tokenizer.lowercase = data[0] & 4;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (align) {
      const AlignRequest request = parse_align_request(body, limits, two_models, two_models);
      check_pairs(request.src, request.tgt, request.list, limits);
      check(!request.method.threshold || (request.method.weight > 0 && request.method.weight <= 1));
      check(two_models || !request.method.average);
      check(request.symmetrize.has_value() == (two_models && !request.method.average));  // resolved
    } else if (score) {
      const ScoreRequest request = parse_score_request(body, limits);
      check_pairs(request.src, request.tgt, request.list, limits);
      check_beam_options(request.ranking);  // what the Scorer checks (throws rnnsearch::Error)
    } else {
      const TranslateRequest request = parse_translate_request(body, limits);
      check(request.sentences.size() <= static_cast<size_t>(limits.max_sentences));
      check(request.list || request.sentences.size() == 1);
      for (const std::string& sentence : request.sentences) check_sentence(sentence, limits);
      check(request.steering.empty() || request.steering.size() == request.sentences.size());
      for (const LineSteering& steering : request.steering) {
        try {
          check_steering(steering, request.beam);  // what translate checks of a line's (decode/steering.h)
        } catch (const Error&) {
          std::abort();
        }
        check_sentence(steering.prefix, limits);
        for (const auto* phrases : {&steering.constraints, &steering.avoid})
          for (const std::string& phrase : *phrases) check_sentence(phrase, limits);
      }
      check(request.beam.beam_size >= 1 && request.beam.beam_size <= limits.max_beam_size);
      check(request.beam.n_best >= 0 && request.beam.n_best <= request.beam.beam_size);
      check(std::isfinite(request.beam.normalize) && request.beam.normalize >= 0);
      check(!request.beam.alignment);  // the table's values: the service keeps the attention (call_options.h)
      check_beam_options(request.beam);  // the decoder's own check (throws rnnsearch::Error)
    }
  } catch (const RequestError& e) {
    check(e.status >= 400 && e.status < 600);
    // The route's answer: {"error": message}, valid JSON whatever the message quotes of the
    // body (nlohmann's parse errors quote the bytes last read, which can end mid-character).
    const nlohmann::json answer = nlohmann::json::parse(error_body(e.what()));
    check(answer.at("error").is_string() && !answer.at("error").get<std::string>().empty());
  }
  return 0;
}
