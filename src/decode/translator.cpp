#include "rnnsearch/decode/translator.h"

#include <algorithm>
#include <stdexcept>

#include "rnnsearch/decode/decode_options.h"
#include "rnnsearch/decode/parallel_batches.h"
#include "rnnsearch/error.h"
#include "rnnsearch/model/products.h"
#include "rnnsearch/text/tokenizer.h"
#include "rnnsearch/util/checks.h"

namespace rnnsearch {

Translator::Translator(const ModelDefinition& model, const std::vector<const Parameters<float>*>& models,
                       const TranslatorOptions& options)
    : model_(model), options_(options) {
  check_beam_options(options.beam);
  check_at_least("batch-size", options.batch_size, 1);
  check_at_least("max-length", options.max_length, 1);
  if (options.replace_unk && !options.beam.alignment) throw Error("--replace-unk needs the attention (beam.alignment)");
  if (options.replace_unk && options.piece_alignments)
    throw Error("--replace-unk works on word alignments: drop --alignment-units pieces");
  std::vector<LowPrecisionProjection> low_precision;
  for (const Parameters<float>* params : models) {
    if (options.precision == Precision::bf16) {
      bf16_.push_back(std::make_unique<Bf16Projection>());
      convert_projection(*params, *bf16_.back());
      low_precision.push_back({bf16_.back().get(), nullptr});
    } else if (options.precision == Precision::int8) {
      int8_.push_back(std::make_unique<Int8Projection>());
      convert_projection(*params, *int8_.back());
      low_precision.push_back({nullptr, int8_.back().get()});
    }
  }
  const int threads = std::max(1, options.threads);
  searches_.reserve(threads);
  std::vector<char> joins;  // how each target token joins the word before it: none of a word-level model's
  std::vector<std::string> pieces;
  if (model.uses_subwords())
    for (size_t w = 0; w < model.tgt_vocab.size(); ++w) {
      pieces.push_back(model.tgt_vocab.token(static_cast<int>(w)));
      joins.push_back(word_join(pieces.back(), model.tgt_subwords.identity()));
    }
  for (int t = 0; t < threads; ++t) {
    searches_.emplace_back(models, low_precision);
    searches_.back().set_word_pieces(joins, pieces);
  }
  decoding_.resize(static_cast<size_t>(threads));
  if (options.beam.alignment && !options.beam.raw_attention)
    for (const Parameters<float>* params : models)
      if (params->config().alignment_output > 0) alignment_models_.push_back(params);
  if (!alignment_models_.empty()) alignment_workspaces_.resize(static_cast<size_t>(threads));
}

void Translator::align_hypotheses(int thread, const std::vector<const std::vector<int>*>& sources,
                                  const std::vector<std::vector<Hypothesis>*>& hypotheses) {
  if (alignment_models_.empty()) return;
  // one pair (source, tokens + </s>) per hypothesis; its alignment has a row for each
  std::vector<std::vector<int>> src, tgt;
  std::vector<Hypothesis*> pairs;
  for (size_t k = 0; k < sources.size(); ++k)
    for (Hypothesis& h : *hypotheses[k]) {
      src.push_back(*sources[k]);
      tgt.push_back(h.tokens);
      tgt.back().push_back(Vocab::kEos);
      pairs.push_back(&h);
    }
  if (pairs.empty()) return;
  std::vector<uint32_t> ids(pairs.size());
  for (size_t p = 0; p < ids.size(); ++p) ids[p] = static_cast<uint32_t>(p);
  const Batch batch = pad_batch(src, tgt, ids);
  const Index B = batch.size;
  for (Hypothesis* h : pairs) std::fill(h->alignment.weights.begin(), h->alignment.weights.end(), 0.0f);
  const float weight = 1.0f / static_cast<float>(alignment_models_.size());
  ModelWorkspace<float>& ws = alignment_workspaces_[static_cast<size_t>(thread)];
  for (const Parameters<float>* params : alignment_models_) {
    const MatCRef<float> beta = rnnsearch_alignment_output<float>(*params, batch, ws);
    for (Index b = 0; b < B; ++b) {
      Alignment& a = pairs[static_cast<size_t>(b)]->alignment;
      for (int i = 0; i < a.rows; ++i)
        for (int j = 0; j < a.cols; ++j)
          a.weights[static_cast<size_t>(i) * a.cols + j] += weight * beta(static_cast<Index>(i) * B + b, j);
    }
  }
}

// Tokens and ids (</s> appended; unknown words become <unk>) of one line, and the target ids
// of its steering (no </s>; the special tokens' names, typed as words, become <unk> too).
// Lines without tokens get no ids and are not decoded.
LineTranslation Translator::prepare(const std::string& text, const LineSteering* steering, size_t line,
                                    std::vector<int>& ids, BeamSearch<float>::Steering& steering_ids) const {
  LineTranslation result;
  result.line = line;
  if (!is_valid_utf8(text)) {
    result.warning = "invalid UTF-8; its output line is empty";
    return result;
  }
  if (steering) {
    const auto valid = [](const std::vector<std::string>& phrases) {
      return std::all_of(phrases.begin(), phrases.end(), [](const std::string& p) { return is_valid_utf8(p); });
    };
    const char* invalid = !is_valid_utf8(steering->prefix) ? "target prefix is"
                          : !valid(steering->constraints)  ? "constraints are"
                          : !valid(steering->avoid)        ? "phrases to avoid are"
                                                           : nullptr;
    if (invalid) {
      result.warning = std::string("its ") + invalid + " invalid UTF-8; its output line is empty";
      return result;
    }
  }
  result.source = tokenize(text, model_.tokenizer);
  const size_t max_length = static_cast<size_t>(options_.max_length);
  if (result.source.size() > max_length) {
    result.warning = std::to_string(result.source.size()) + " tokens, cut to the first " +
                     std::to_string(max_length) + " (--max-length)";
    result.source.resize(max_length);
  }
  if (result.source.empty()) return result;
  std::vector<std::string> pieces = model_.src_subwords.encode(result.source, &result.source_word_of_piece);
  ids = model_.src_vocab.encode(pieces);
  if (options_.piece_alignments) result.source_pieces = std::move(pieces);
  steering_ids = {};
  if (!steering) return result;
  steering_ids.prefix = target_ids(steering->prefix);
  for (const std::string& phrase : steering->constraints)
    if (std::vector<int> phrase_ids = target_ids(phrase); !phrase_ids.empty()) {
      if (std::find(phrase_ids.begin(), phrase_ids.end(), Vocab::kUnk) != phrase_ids.end())
        result.warning += std::string(result.warning.empty() ? "" : "; ") + "its constraint '" + phrase +
                          "' has words or characters the model cannot write: the translation holds <unk> in their place";
      steering_ids.constraints.include.push_back(std::move(phrase_ids));
    }
  for (const std::string& phrase : steering->avoid)
    if (std::vector<int> phrase_ids = target_ids(phrase); !phrase_ids.empty())
      steering_ids.constraints.avoid.push_back(std::move(phrase_ids));
  return result;
}

std::vector<int> Translator::target_ids(const std::string& text) const {
  if (text.empty()) return {};
  std::vector<int> ids = model_.tgt_vocab.encode(model_.tgt_subwords.encode(tokenize(text, model_.tokenizer)));
  ids.pop_back();  // </s>
  for (int& id : ids)
    if (id == Vocab::kEos || id == Vocab::kBos || id == Vocab::kPad) id = Vocab::kUnk;
  return ids;
}

void Translator::to_words(const LineTranslation& translation, Hypothesis& h) const {
  const bool identity = model_.tgt_subwords.identity();
  std::vector<int> word_of_piece;
  std::vector<std::string> pieces = model_.tgt_vocab.decode(h.tokens);
  h.words = join_pieces(pieces, identity, &word_of_piece);
  if (h.alternative >= 0)  // the piece after the prefix begins a word (set_word_pieces)
    h.alternative = h.alternative < static_cast<int>(word_of_piece.size()) ? word_of_piece[h.alternative]
                                                                           : static_cast<int>(h.words.size());
  if (options_.piece_alignments) h.target_pieces = std::move(pieces);
  if (!model_.uses_subwords() || options_.piece_alignments) return;
  h.alignment = word_alignment(h.alignment, word_of_piece, static_cast<int>(h.words.size()),
                               translation.source_word_of_piece, static_cast<int>(translation.source.size()));
}

void Translator::finish(LineTranslation& result, std::vector<Hypothesis> hypotheses,
                        const std::vector<std::string>& constraints) const {
  result.hypotheses = std::move(hypotheses);
  for (Hypothesis& h : result.hypotheses) {
    to_words(result, h);
    if (options_.replace_unk) options_.unk_replacement.apply(result.source, h);
  }
  if (result.hypotheses.empty()) return;
  // The search's own account of the phrases the best holds: bit i for the i-th that has tokens
  // (prepare() drops the others).
  const uint64_t met = result.hypotheses.front().constraints_met;
  int i = 0;
  for (const std::string& constraint : constraints) {
    if (target_ids(constraint).empty() || (met >> i++ & 1)) continue;
    result.warning += std::string(result.warning.empty() ? "" : "; ") + "its translation lacks the constraint '" +
                      constraint + "' (no hypothesis within the length limit holds every constraint)";
  }
}

std::vector<LineTranslation> Translator::translate(const std::vector<std::string>& lines, size_t first_line,
                                                   const std::vector<LineSteering>& steering) {
  if (!steering.empty() && steering.size() != lines.size())
    throw std::logic_error("Translator::translate: one steering per line");
  const bool steered = !steering.empty();
  std::vector<LineTranslation> results;
  std::vector<std::vector<int>> ids(lines.size());
  BeamSearch<float>::Steerings steering_ids(lines.size());
  std::vector<size_t> order;  // the lines to decode, longest first
  for (size_t k = 0; k < lines.size(); ++k) {
    results.push_back(prepare(lines[k], steered ? &steering[k] : nullptr, first_line + k, ids[k], steering_ids[k]));
    if (!ids[k].empty()) order.push_back(k);
  }
  static const std::vector<std::string> kNone;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ids[a].size() > ids[b].size(); });
  const size_t batch_size =
      balanced_batch_size(order.size(), static_cast<size_t>(options_.batch_size), static_cast<int>(searches_.size()));
  run_batches(order, batch_size, static_cast<int>(searches_.size()),
              [&](const std::vector<size_t>& members, int thread) {
                const InvariantProducts invariant(options_.beam.batch_invariant);  // a line's output does not depend on its batch
                std::vector<std::vector<int>> sources;
                BeamSearch<float>::Steerings batch_steering;
                std::vector<uint64_t> keys;  // the line numbers: a line's samples do not depend on its batch
                for (size_t k : members) {
                  sources.push_back(ids[k]);
                  batch_steering.push_back(steering_ids[k]);
                  keys.push_back(first_line + k);
                }
                std::vector<int> words;
                if (options_.shortlist) {  // with the steering's words, which the search must be able to propose
                  words = options_.shortlist->words(sources);
                  for (const BeamSearch<float>::Steering& one : batch_steering) {
                    words.insert(words.end(), one.prefix.begin(), one.prefix.end());
                    for (const std::vector<int>& phrase : one.constraints.include)
                      words.insert(words.end(), phrase.begin(), phrase.end());
                  }
                  std::sort(words.begin(), words.end());
                  words.erase(std::unique(words.begin(), words.end()), words.end());
                }
                auto hypotheses = searches_[thread].search(sources, options_.beam, options_.shortlist ? &words : nullptr,
                                                           steered ? &batch_steering : nullptr, &keys);
                if (!alignment_models_.empty()) {
                  std::vector<const std::vector<int>*> source_of;
                  std::vector<std::vector<Hypothesis>*> hypotheses_of;
                  for (size_t i = 0; i < members.size(); ++i) {
                    source_of.push_back(&sources[i]);
                    hypotheses_of.push_back(&hypotheses[i]);
                  }
                  align_hypotheses(thread, source_of, hypotheses_of);
                }
                for (size_t i = 0; i < members.size(); ++i)
                  finish(results[members[i]], std::move(hypotheses[i]),
                         steered ? steering[members[i]].constraints : kNone);
              });
  share_batch_results(
      order, batch_size,
      [&](mpi::Writer& message, size_t k) { write_hypotheses(message, results[k].hypotheses); },
      [&](mpi::Reader& message, size_t k) { read_hypotheses(message, results[k].hypotheses); });
  return results;
}

void Translator::add(int thread, const std::vector<std::string>& lines, const std::vector<size_t>& tags,
                     std::vector<Finished>& done, const std::vector<LineSteering>& steering,
                     const std::vector<uint64_t>& keys) {
  if (!steering.empty() && steering.size() != lines.size())
    throw std::logic_error("Translator::add: one steering per line");
  if (!keys.empty() && keys.size() != lines.size()) throw std::logic_error("Translator::add: one key per line");
  if (options_.shortlist) throw std::logic_error("Translator::add: continuous translation has no shortlist");
  const InvariantProducts invariant(options_.beam.batch_invariant);  // (its encoder's products)
  BeamSearch<float>& search = searches_[thread];
  if (search.sentences() == 0) {
    search.start(options_.beam);
    decoding_[thread].clear();
  }
  std::vector<std::vector<int>> sources;
  BeamSearch<float>::Steerings source_steering;
  std::vector<uint64_t> source_keys;
  std::vector<Decoding> prepared;
  for (size_t k = 0; k < lines.size(); ++k) {
    Decoding line{{tags[k], {}}, {}};
    std::vector<int> ids;
    BeamSearch<float>::Steering steering_ids;
    line.line.translation = prepare(lines[k], steering.empty() ? nullptr : &steering[k], 0, ids, steering_ids);
    if (ids.empty()) {
      done.push_back(std::move(line.line));
    } else {
      sources.push_back(std::move(ids));
      source_steering.push_back(std::move(steering_ids));
      if (!steering.empty()) line.constraints = steering[k].constraints;
      if (!alignment_models_.empty()) line.source_ids = sources.back();
      if (!keys.empty()) source_keys.push_back(keys[k]);
      prepared.push_back(std::move(line));
    }
  }
  size_t id = search.add(sources, steering.empty() ? nullptr : &source_steering, keys.empty() ? nullptr : &source_keys);
  for (Decoding& line : prepared) decoding_[thread].emplace(id++, std::move(line));
}

void Translator::step(int thread, std::vector<Finished>& done) {
  const InvariantProducts invariant(options_.beam.batch_invariant);  // nor on the others decoded with it
  std::vector<BeamSearch<float>::Finished> finished = searches_[thread].step();
  if (!alignment_models_.empty()) {
    std::vector<const std::vector<int>*> source_of;
    std::vector<std::vector<Hypothesis>*> hypotheses_of;
    for (BeamSearch<float>::Finished& sentence : finished) {
      source_of.push_back(&decoding_[thread].find(sentence.id)->second.source_ids);
      hypotheses_of.push_back(&sentence.hypotheses);
    }
    align_hypotheses(thread, source_of, hypotheses_of);
  }
  for (BeamSearch<float>::Finished& sentence : finished) {
    auto found = decoding_[thread].find(sentence.id);
    finish(found->second.line.translation, std::move(sentence.hypotheses), found->second.constraints);
    done.push_back(std::move(found->second.line));
    decoding_[thread].erase(found);
  }
}

size_t Translator::remove(int thread, const std::vector<size_t>& tags) {
  std::vector<size_t> ids;
  auto& decoding = decoding_[thread];
  for (auto it = decoding.begin(); it != decoding.end();) {
    if (std::find(tags.begin(), tags.end(), it->second.line.tag) == tags.end()) {
      ++it;
      continue;
    }
    ids.push_back(it->first);
    it = decoding.erase(it);
  }
  return searches_[thread].remove(ids);
}

void Translator::clear(int thread) {
  searches_[thread].start(options_.beam);
  decoding_[thread].clear();
}

void translate_chunks(Translator& translator, size_t chunk_lines,
                      const std::function<bool(size_t chunk_lines, std::vector<std::string>& lines,
                                               std::vector<LineSteering>& steering)>& next,
                      const std::function<void(std::vector<LineTranslation>& translations)>& done) {
  std::vector<std::string> lines;
  std::vector<LineSteering> steering;
  for (size_t first = 0; next(chunk_lines, lines, steering); first += lines.size()) {
    std::vector<LineTranslation> translations = translator.translate(lines, first, steering);
    done(translations);
  }
}

}  // namespace rnnsearch
