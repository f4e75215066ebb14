#include "rnnsearch/decode/call_options.h"

namespace rnnsearch {

bool needs_attention(const CallOptions& call) { return call.shows_attention || call.replace_unk; }

TranslatorOptions translator_options(const BeamOptions& beam, const CallOptions& call) {
  TranslatorOptions options;
  options.beam = beam;
  options.beam.alignment = needs_attention(call);
  options.batch_size = call.batch_size;
  options.max_length = call.max_length;
  options.threads = call.threads;
  options.replace_unk = call.replace_unk;
  options.piece_alignments = call.piece_alignments;
  options.precision = call.precision;
  return options;
}

ScorerOptions scorer_options(const BeamOptions& ranking, const CallOptions& call) {
  ScorerOptions options;
  options.batch_size = call.batch_size;
  options.max_length = call.max_length;
  options.threads = call.threads;
  options.alignment = needs_attention(call);
  options.piece_alignments = call.piece_alignments;
  options.ranking = ranking;
  return options;
}

}  // namespace rnnsearch
