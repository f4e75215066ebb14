#pragma once
// The Translators of one loaded model (or ensemble), one per set of decoding options: what the
// Python module and `rnnsearch serve` decode with, as `rnnsearch translate` makes one per run.
// A Translator is made on first use of its options and the `capacity` most recently used are
// kept, since each holds what is costly to make again (with --precision bf16 or int8 its
// converted vocabulary projection, milliseconds to make; its workspaces). Options with a
// shortlist or an --unk-dictionary are the command line's alone and not pooled.
//
// Thread-safe: its own lock guards the list only, and a new Translator is made outside it,
// so that callers looking up other options are not held meanwhile (two callers may make the
// same one at once; the first kept is returned to both). Using a Translator is the caller's
// affair (translator.h: one caller per search thread).
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "rnnsearch/decode/translator.h"

namespace rnnsearch {

class TranslatorPool {
 public:
  // Keeps a reference to models, which must outlive the pool and its Translators.
  TranslatorPool(const std::vector<Model>& models, size_t capacity);

  // The Translator of these options (made if new). Throws rnnsearch::Error for invalid
  // options (check_beam_options, then Translator's checks), naming the option.
  std::shared_ptr<Translator> get(const TranslatorOptions& options);
  // The kept Translator of these options, or null: never makes one, so a caller holding a
  // lock of its own may look (a server's queue lock), and call get() after releasing it.
  std::shared_ptr<Translator> find(const TranslatorOptions& options);
  // What tells Translators apart: equal keys, equal options (a server batches the sentences
  // of requests with equal keys together).
  static std::vector<double> key(const TranslatorOptions& options);

 private:
  std::shared_ptr<Translator> kept(const std::vector<double>& key);  // with mutex_ held
  const std::vector<Model>& models_;
  size_t capacity_;
  std::mutex mutex_;
  std::vector<std::pair<std::vector<double>, std::shared_ptr<Translator>>> kept_;  // most recent last
};

}  // namespace rnnsearch
