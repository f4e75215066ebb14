#include "rnnsearch/decode/translator_pool.h"

#include <algorithm>

#include "rnnsearch/decode/decode_options.h"

namespace rnnsearch {

// Every option a pooled Translator is made from, as one comparable list: the table's decoding
// options (decode_options.h; checked to be finite first, so that equal options give equal
// keys), then the others.
std::vector<double> TranslatorPool::key(const TranslatorOptions& o) {
  std::vector<double> key;
  for (const DecodeOptionSpec& spec : decode_option_specs()) key.push_back(spec.value(o.beam));
  key.insert(key.end(), {static_cast<double>(o.beam.alignment), static_cast<double>(o.beam.max_output_length),
                         static_cast<double>(o.batch_size), static_cast<double>(o.max_length),
                         static_cast<double>(o.threads), static_cast<double>(o.replace_unk),
                         static_cast<double>(o.piece_alignments), static_cast<double>(o.precision)});
  return key;
}

TranslatorPool::TranslatorPool(const std::vector<Model>& models, size_t capacity)
    : models_(models), capacity_(std::max<size_t>(capacity, 1)) {}

std::shared_ptr<Translator> TranslatorPool::kept(const std::vector<double>& key) {
  auto found = std::find_if(kept_.begin(), kept_.end(), [&](const auto& k) { return k.first == key; });
  if (found == kept_.end()) return nullptr;
  std::rotate(found, found + 1, kept_.end());  // now the most recently used
  return kept_.back().second;
}

std::shared_ptr<Translator> TranslatorPool::find(const TranslatorOptions& options) {
  check_beam_options(options.beam);  // first: a NaN normalize would match no key
  std::lock_guard<std::mutex> lock(mutex_);
  return kept(key(options));
}

std::shared_ptr<Translator> TranslatorPool::get(const TranslatorOptions& options) {
  check_beam_options(options.beam);
  std::vector<double> key = TranslatorPool::key(options);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto translator = kept(key)) return translator;
  }
  auto made = std::make_shared<Translator>(models_.front(), ensemble_weights(models_), options);
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto translator = kept(key)) return translator;  // another caller made one meanwhile
  if (kept_.size() == capacity_) kept_.erase(kept_.begin());
  kept_.emplace_back(std::move(key), std::move(made));
  return kept_.back().second;
}

}  // namespace rnnsearch
