#pragma once
// What one call asks of the Translator or the Scorer besides the decoding table's options
// (decode_options.h): `rnnsearch translate` and `score`, Python's Translator.translate, .score
// and .align, a server's /translate, /score and /align. Every shell fills a CallOptions from
// its own form (flags, keywords, JSON fields) and makes its TranslatorOptions / ScorerOptions
// here, so that the rules between them live once: the attention is kept when an output shows
// it or --replace-unk uses it (needs_attention), and the rest is copied field for field.
#include "rnnsearch/decode/beam_search.h"
#include "rnnsearch/decode/scorer.h"
#include "rnnsearch/decode/translator.h"
#include "rnnsearch/kernels/precision.h"

namespace rnnsearch {

struct CallOptions {
  int batch_size = 32;            // --batch-size
  int max_length = 200;           // --max-length (a server's --max-tokens)
  int threads = 1;                // as set_threads resolved --threads
  Precision precision = Precision::fp32;  // translate's --precision, as resolved
  bool piece_alignments = false;  // --alignment-units pieces
  // An output shows the attention: --alignment hard or soft, --format json, --heatmaps;
  // Python's return_attention (align: always); a request's "alignment" or "heatmap".
  bool shows_attention = false;
  bool replace_unk = false;       // translate's --replace-unk, which reads the attention
};

// The attention is kept (BeamOptions::alignment, ScorerOptions::alignment) when an output
// shows it or --replace-unk uses it.
bool needs_attention(const CallOptions& call);

// A Translator's options: `beam` (the decoding table's values) with the attention kept as
// needs_attention says, and the call's sizes, threads, precision and --replace-unk. What is
// translate's alone (--shortlist, --unk-dictionary) the command adds.
TranslatorOptions translator_options(const BeamOptions& beam, const CallOptions& call);

// A Scorer's options: what each pair's score ranks by (`ranking`: the table's values for
// score, log_prob_ranking() without them), the attention kept as needs_attention says, and the
// call's sizes and threads.
ScorerOptions scorer_options(const BeamOptions& ranking, const CallOptions& call);

}  // namespace rnnsearch
