#pragma once
// Translation of a stream of lines, chunk by chunk (what `rnnsearch translate` runs):
//
//   each line: UTF-8 check, tokenize, cut at max_length tokens, map to ids (+ </s>); its
//   steering, if any (target prefix, constraints, phrases to avoid), tokenized and mapped to
//   target ids the same way (no </s>)
//   the chunk's sentences sorted by length and cut into batches of batch_size (smaller, if
//   that leaves a thread without a batch), so a batch holds sentences of similar length
//   (little padding, beams that end together)
//   batches decoded in parallel, one BeamSearch (its own workspaces) per thread, each
//   over its batch's shortlist if one is given
//   results returned in input order, one per line, as whole words (subword models decode
//   pieces; the Translator joins them and sums/averages their attention into words)
//
// A server instead feeds lines one by one into running searches (continuous batching,
// BeamSearch::add/step): lines join a search between its steps and leave it when finished,
// prepared and finished as above, so each gets what translate() gives it.
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "rnnsearch/decode/beam_search.h"
#include "rnnsearch/decode/shortlist.h"
#include "rnnsearch/decode/steering.h"  // LineSteering
#include "rnnsearch/decode/unk_replacement.h"
#include "rnnsearch/model/model_io.h"
#include "rnnsearch/model/rnnsearch.h"

namespace rnnsearch {

struct TranslatorOptions {
  BeamOptions beam;
  int batch_size = 32;   // sentences decoded together
  int max_length = 200;  // source tokens (</s> not counted); longer lines are cut
  int threads = 1;       // batches decoded at once
  bool replace_unk = false;       // --replace-unk (needs beam.alignment)
  bool piece_alignments = false;  // --alignment-units pieces: keep the subword pieces' matrix
  UnkReplacement unk_replacement;
  std::shared_ptr<const Shortlist> shortlist;  // --shortlist: restricts each batch's output layer
  // --precision bf16 or int8: the vocabulary projection in bf16 (kernels/bf16.h) or int8
  // (kernels/int8.h); not with a shortlist.
  // The weights are converted once, so the models' weights must not change afterwards.
  Precision precision = Precision::fp32;
};

// The result for one input line. Empty lines and lines that are not UTF-8 have no source
// tokens and no hypotheses.
struct LineTranslation {
  size_t line = 0;                     // 0-based input line number
  std::vector<std::string> source;     // the source tokens translated (after a cut)
  std::vector<int> source_word_of_piece;  // each source subword piece's token index
  std::vector<std::string> source_pieces;  // with piece_alignments: the alignment's columns
  std::vector<Hypothesis> hypotheses;  // best first, with words and word alignments
  std::string warning;                 // why the line was cut or left untranslated; "" if fine
};

class Translator {
 public:
  // Keeps references to the model's definition and the weights of each model of the
  // ensemble (one, usually; training validates with the weights it is training).
  Translator(const ModelDefinition& model, const std::vector<const Parameters<float>*>& models,
             const TranslatorOptions& options);

  // lines[k] is input line first_line + k; returns one result per line, in order.
  // steering: empty, or one per line. A line whose best hypothesis lacks one of its
  // constraints (the search could not fit them) gets a warning.
  std::vector<LineTranslation> translate(const std::vector<std::string>& lines, size_t first_line,
                                         const std::vector<LineSteering>& steering = {});

  // Continuous translation on search `thread` (0 .. threads-1; one caller per thread; not
  // with a shortlist). add: the lines join the search at its next step, tagged by the
  // caller; step: one decoder step. Both append the lines that finished to `done` (a line
  // without tokens at once). remove: the lines of these tags leave the search without a
  // result (a server's timed-out requests); returns how many were in it. clear: drops the
  // lines in the search (after an exception). keys: empty, or one per line: what, with the
  // seed, makes a line's samples (BeamSearch::add); translate() uses the line numbers.
  struct Finished {
    size_t tag;
    LineTranslation translation;  // .line = 0
  };
  void add(int thread, const std::vector<std::string>& lines, const std::vector<size_t>& tags,
           std::vector<Finished>& done, const std::vector<LineSteering>& steering = {},
           const std::vector<uint64_t>& keys = {});
  void step(int thread, std::vector<Finished>& done);
  size_t remove(int thread, const std::vector<size_t>& tags);
  void clear(int thread);
  size_t decoding(int thread) const { return searches_[thread].sentences(); }

 private:
  // The line's source ids and its steering's target ids (none when the line has no tokens).
  LineTranslation prepare(const std::string& text, const LineSteering* steering, size_t line, std::vector<int>& ids,
                          BeamSearch<float>::Steering& steering_ids) const;
  std::vector<int> target_ids(const std::string& text) const;
  // The line's hypotheses as words, with --replace-unk applied; a warning for each constraint
  // the best one lacks.
  void finish(LineTranslation& result, std::vector<Hypothesis> hypotheses, const std::vector<std::string>& constraints) const;
  // With beam.alignment and models with an alignment output (not raw_attention): replaces each
  // hypothesis' attention by the alignment output of its tokens (the mean of the models' that
  // have one), computed by teacher forcing once the search is over: it sees every word it
  // aligns. sources[k] holds the ids of hypotheses[k]'s sentence.
  void align_hypotheses(int thread, const std::vector<const std::vector<int>*>& sources,
                        const std::vector<std::vector<Hypothesis>*>& hypotheses);
  // Fills h.words from h.tokens and turns a subword model's alignment into word alignment.
  void to_words(const LineTranslation& translation, Hypothesis& h) const;

  const ModelDefinition& model_;
  TranslatorOptions options_;
  // one per model with --precision bf16 or int8
  std::vector<std::unique_ptr<Bf16Projection>> bf16_;
  std::vector<std::unique_ptr<Int8Projection>> int8_;
  std::vector<BeamSearch<float>> searches_;  // one per thread
  std::vector<const Parameters<float>*> alignment_models_;  // those with an alignment output, if shown
  std::vector<ModelWorkspace<float>> alignment_workspaces_;  // one per thread, for align_hypotheses
  // Per thread, the lines in its continuous search: search id → (tag, prepared line).
  struct Decoding {
    Finished line;
    std::vector<std::string> constraints;  // for finish()'s warnings
    std::vector<int> source_ids;           // for align_hypotheses
  };
  std::vector<std::unordered_map<size_t, Decoding>> decoding_;
};

// Translates lines as `rnnsearch translate` reads its input: chunk_lines at a time
// (--batch-size × --maxi-batch), each chunk's sentences sorted by length and batched within
// it, so that whatever translates this way gives translate's output byte for byte (the Python
// module's contract). next(count, lines, steering) fills the next chunk with up to count lines
// (and their steering, or leaves steering empty) and returns false when there are none;
// done receives each chunk's translations, in input order, their
// .line counted from the first line of the first chunk.
void translate_chunks(Translator& translator, size_t chunk_lines,
                      const std::function<bool(size_t chunk_lines, std::vector<std::string>& lines,
                                               std::vector<LineSteering>& steering)>& next,
                      const std::function<void(std::vector<LineTranslation>& translations)>& done);

}  // namespace rnnsearch
