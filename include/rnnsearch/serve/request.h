#pragma once
// The requests of `rnnsearch serve` (docs/serve.md): a JSON body of POST /translate, /score or /align
// → a checked request, or RequestError (a 4xx and its message). Owns the request structs,
// their parsing and validation against the limits of one request. Takes no lock (pure
// functions of their arguments).
#include <stdexcept>
#include <string>
#include <vector>

#include "rnnsearch/align/aligner.h"
#include "rnnsearch/decode/beam_search.h"
#include "rnnsearch/decode/scorer.h"
#include "rnnsearch/output/output.h"
#include "rnnsearch/text/tokenizer.h"

namespace rnnsearch::serve {

// A request the server refuses: HTTP status (4xx, or 503 when busy or stopping) and message.
struct RequestError : std::runtime_error {
  RequestError(int status, const std::string& message) : std::runtime_error(message), status(status) {}
  int status;
};

struct TranslateRequest {
  std::vector<std::string> sentences;
  bool list = false;        // "q" was a list (else one string)
  // "target_prefix", "constraints", "avoid": empty (none given), or one per sentence
  std::vector<LineSteering> steering;
  BeamOptions beam;         // the decoding options' fields (decode_options.h); the service keeps the attention (call_options.h)
  AlignmentFormat alignment = AlignmentFormat::none;
  bool replace_unk = false;
  bool detokenize = false;
  bool heatmap = false;     // add each hypothesis' heatmap_svg (the --heatmaps picture)
};

struct ScoreRequest {
  std::vector<std::string> src, tgt;
  bool list = false;
  AlignmentFormat alignment = AlignmentFormat::none;
  BeamOptions ranking = log_prob_ranking();  // what each pair's "score" ranks by (as score's options)
};

struct AlignRequest {
  std::vector<std::string> src, tgt;
  bool list = false;
  align::AlignMethod method;                       // "method", as align --method (argmax)
  std::optional<align::Symmetrization> symmetrize;  // "symmetrize", resolved (align::resolved_symmetrization)
  bool hmm = false;  // "aligner": "hmm" (the server's --hmm-tables) rather than "model"
};

// What a request is checked against: ServiceOptions' limits of one request (--max-sentences,
// --max-tokens, --max-beam-size) and the model's tokenizer, whose tokens --max-tokens counts.
struct RequestLimits {
  int max_sentences, max_tokens, max_beam_size;
  TokenizerOptions tokenizer;
};

// Each throws RequestError (400, 413, 422) naming the field at fault.
TranslateRequest parse_translate_request(const std::string& body, const RequestLimits& limits);
ScoreRequest parse_score_request(const std::string& body, const RequestLimits& limits);
// two_models: the server has a reverse model (serve --reverse-model); a method or
// symmetrization that needs one, or does not fit it, is 422.
// two_models: the server has reverse models; hmm_tables: it has --hmm-tables.
AlignRequest parse_align_request(const std::string& body, const RequestLimits& limits, bool two_models,
                                 bool hmm_tables);

}  // namespace rnnsearch::serve
