#pragma once
// The response bodies of `rnnsearch serve` (docs/serve.md): the JSON of /translate, /score,
// /align and /info, and of errors. The tokens, scores and attention are those of `translate
// --format json` (OutputPrinter::record, record_json). Takes no lock (pure functions of
// their arguments).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rnnsearch/decode/scorer.h"
#include "rnnsearch/decode/translator.h"
#include "rnnsearch/model/model_io.h"
#include "rnnsearch/serve/request.h"
#include "rnnsearch/text/tokenizer.h"

namespace rnnsearch::serve {

struct ServiceOptions;  // service.h

// One entry per result, in order; `tokenizer` is the model's, for the text of a translation.
nlohmann::ordered_json translate_json(const TranslateRequest& request, const std::vector<LineTranslation>& results,
                                      const TokenizerOptions& tokenizer);
nlohmann::ordered_json score_json(const ScoreRequest& request, const std::vector<ScoredPair>& pairs);
// Per pair its words and links [[source, target], ...] (what `rnnsearch align` prints).
nlohmann::ordered_json align_json(const std::vector<align::AlignedPair>& pairs);
// The models (an ensemble: all share their vocabularies), the reverse ones of /align (none:
// empty) and the options they are served with.
nlohmann::ordered_json info_json(const std::vector<Model>& models, const std::vector<Model>& reverse,
                                 const ServiceOptions& options);

// The body of a 4xx/5xx response: {"error": message}, invalid UTF-8 replaced.
std::string error_body(const std::string& message);
// A JSON body, invalid UTF-8 (which no decoded token holds) replaced rather than thrown.
std::string json_body(const nlohmann::ordered_json& value);

}  // namespace rnnsearch::serve
