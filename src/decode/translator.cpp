#include "rnnsearch/decode/translator.h"

#include <algorithm>
#include <stdexcept>

#include "rnnsearch/decode/decode_options.h"
#include "rnnsearch/decode/parallel_batches.h"
#include "rnnsearch/error.h"
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
  std::vector<char> continues;  // which target tokens continue a word: none of a word-level model's
  if (model.uses_subwords())
    for (size_t w = 0; w < model.tgt_vocab.size(); ++w)
      continues.push_back(continues_word(model.tgt_vocab.token(static_cast<int>(w)), model.tgt_subwords.identity()));
  for (int t = 0; t < threads; ++t) {
    searches_.emplace_back(models, low_precision);
    searches_.back().set_word_pieces(continues);
  }
  decoding_.resize(static_cast<size_t>(threads));
}

// Tokens and ids (</s> appended; unknown words become <unk>) of one line, and the target ids
// of its prefix (no </s>; the special tokens' names, typed as words, become <unk> too).
// Lines without tokens get no ids and are not decoded.
LineTranslation Translator::prepare(const std::string& text, const std::string& prefix, size_t line,
                                    std::vector<int>& ids, std::vector<int>& prefix_ids) const {
  LineTranslation result;
  result.line = line;
  if (!is_valid_utf8(text)) {
    result.warning = "invalid UTF-8; its output line is empty";
    return result;
  }
  if (!is_valid_utf8(prefix)) {
    result.warning = "its target prefix is invalid UTF-8; its output line is empty";
    return result;
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
  prefix_ids.clear();
  if (!prefix.empty()) {
    prefix_ids = model_.tgt_vocab.encode(model_.tgt_subwords.encode(tokenize(prefix, model_.tokenizer)));
    prefix_ids.pop_back();  // </s>
    for (int& id : prefix_ids)
      if (id == Vocab::kEos || id == Vocab::kBos || id == Vocab::kPad) id = Vocab::kUnk;
  }
  return result;
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

void Translator::finish(LineTranslation& result, std::vector<Hypothesis> hypotheses) const {
  result.hypotheses = std::move(hypotheses);
  for (Hypothesis& h : result.hypotheses) {
    to_words(result, h);
    if (options_.replace_unk) options_.unk_replacement.apply(result.source, h);
  }
}

std::vector<LineTranslation> Translator::translate(const std::vector<std::string>& lines, size_t first_line,
                                                   const std::vector<std::string>& prefixes) {
  if (!prefixes.empty() && prefixes.size() != lines.size())
    throw std::logic_error("Translator::translate: one target prefix per line");
  const bool with_prefixes = !prefixes.empty();
  std::vector<LineTranslation> results;
  std::vector<std::vector<int>> ids(lines.size()), prefix_ids(lines.size());
  std::vector<size_t> order;  // the lines to decode, longest first
  for (size_t k = 0; k < lines.size(); ++k) {
    results.push_back(prepare(lines[k], with_prefixes ? prefixes[k] : std::string(), first_line + k, ids[k], prefix_ids[k]));
    if (!ids[k].empty()) order.push_back(k);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ids[a].size() > ids[b].size(); });
  const size_t batch_size =
      balanced_batch_size(order.size(), static_cast<size_t>(options_.batch_size), static_cast<int>(searches_.size()));
  run_batches(order, batch_size, static_cast<int>(searches_.size()),
              [&](const std::vector<size_t>& members, int thread) {
                std::vector<std::vector<int>> sources, batch_prefixes;
                std::vector<uint64_t> keys;  // the line numbers: a line's samples do not depend on its batch
                for (size_t k : members) {
                  sources.push_back(ids[k]);
                  batch_prefixes.push_back(prefix_ids[k]);
                  keys.push_back(first_line + k);
                }
                std::vector<int> words;
                if (options_.shortlist) {  // with the prefixes' words, which the search must be able to force
                  words = options_.shortlist->words(sources);
                  for (const std::vector<int>& prefix : batch_prefixes) words.insert(words.end(), prefix.begin(), prefix.end());
                  std::sort(words.begin(), words.end());
                  words.erase(std::unique(words.begin(), words.end()), words.end());
                }
                auto hypotheses = searches_[thread].search(sources, options_.beam, options_.shortlist ? &words : nullptr,
                                                           with_prefixes ? &batch_prefixes : nullptr, &keys);
                for (size_t i = 0; i < members.size(); ++i) finish(results[members[i]], std::move(hypotheses[i]));
              });
  share_batch_results(
      order, batch_size,
      [&](mpi::Writer& message, size_t k) { write_hypotheses(message, results[k].hypotheses); },
      [&](mpi::Reader& message, size_t k) { read_hypotheses(message, results[k].hypotheses); });
  return results;
}

void Translator::add(int thread, const std::vector<std::string>& lines, const std::vector<size_t>& tags,
                     std::vector<Finished>& done, const std::vector<std::string>& prefixes,
                     const std::vector<uint64_t>& keys) {
  if (!prefixes.empty() && prefixes.size() != lines.size())
    throw std::logic_error("Translator::add: one target prefix per line");
  if (!keys.empty() && keys.size() != lines.size()) throw std::logic_error("Translator::add: one key per line");
  if (options_.shortlist) throw std::logic_error("Translator::add: continuous translation has no shortlist");
  BeamSearch<float>& search = searches_[thread];
  if (search.sentences() == 0) {
    search.start(options_.beam);
    decoding_[thread].clear();
  }
  std::vector<std::vector<int>> sources, source_prefixes;
  std::vector<uint64_t> source_keys;
  std::vector<Finished> prepared;
  for (size_t k = 0; k < lines.size(); ++k) {
    Finished line{tags[k], {}};
    std::vector<int> ids, prefix_ids;
    line.translation = prepare(lines[k], prefixes.empty() ? std::string() : prefixes[k], 0, ids, prefix_ids);
    if (ids.empty()) {
      done.push_back(std::move(line));
    } else {
      sources.push_back(std::move(ids));
      source_prefixes.push_back(std::move(prefix_ids));
      if (!keys.empty()) source_keys.push_back(keys[k]);
      prepared.push_back(std::move(line));
    }
  }
  size_t id = search.add(sources, prefixes.empty() ? nullptr : &source_prefixes, keys.empty() ? nullptr : &source_keys);
  for (Finished& line : prepared) decoding_[thread].emplace(id++, std::move(line));
}

void Translator::step(int thread, std::vector<Finished>& done) {
  for (BeamSearch<float>::Finished& sentence : searches_[thread].step()) {
    auto found = decoding_[thread].find(sentence.id);
    finish(found->second.translation, std::move(sentence.hypotheses));
    done.push_back(std::move(found->second));
    decoding_[thread].erase(found);
  }
}

size_t Translator::remove(int thread, const std::vector<size_t>& tags) {
  std::vector<size_t> ids;
  auto& decoding = decoding_[thread];
  for (auto it = decoding.begin(); it != decoding.end();) {
    if (std::find(tags.begin(), tags.end(), it->second.tag) == tags.end()) {
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
                                               std::vector<std::string>& prefixes)>& next,
                      const std::function<void(std::vector<LineTranslation>& translations)>& done) {
  std::vector<std::string> lines, prefixes;
  for (size_t first = 0; next(chunk_lines, lines, prefixes); first += lines.size()) {
    std::vector<LineTranslation> translations = translator.translate(lines, first, prefixes);
    done(translations);
  }
}

}  // namespace rnnsearch
