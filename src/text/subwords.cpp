#include "rnnsearch/text/subwords.h"

#ifdef RNNSEARCH_HAVE_SENTENCEPIECE
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>
#else
namespace sentencepiece {
class SentencePieceProcessor {};  // never made: Subwords::load says the build has no SentencePiece
}  // namespace sentencepiece
#endif

#include <algorithm>
#include <exception>
#include <numeric>
#include <unordered_map>

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include "rnnsearch/error.h"
#include "rnnsearch/text/line_reader.h"

namespace rnnsearch {
namespace {

constexpr const char* kWordStart = "\xE2\x96\x81";  // ▁ U+2581, SentencePiece's word boundary
constexpr size_t kWordStartBytes = 3;

bool starts_word(const std::string& piece) { return piece.compare(0, kWordStartBytes, kWordStart) == 0; }

#ifdef RNNSEARCH_HAVE_SENTENCEPIECE

// Hands the tokenized lines of files, one file after the other, to the SentencePiece trainer
// without a temporary file or a copy of the text. SentencePiece cannot carry our exceptions:
// an error (unreadable file, invalid UTF-8) ends the iteration with a failed status, and
// rethrow_error() raises it, as it was, once the trainer has returned.
class FileSentences : public sentencepiece::SentenceIterator {
 public:
  FileSentences(const std::vector<std::string>& paths, const TokenizerOptions& tokenizer)
      : paths_(paths), tokenizer_(tokenizer) {
    load();
  }
  bool done() const override { return done_; }
  void Next() override { load(); }
  const std::string& value() const override { return value_; }
  sentencepiece::util::Status status() const override {
    if (!error_) return {};
    return {sentencepiece::util::StatusCode::kAborted, "reading the training text failed"};
  }
  void rethrow_error() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // The next line of the current file, or of the next file when it has ended.
  void load() {
    try {
      for (;;) {
        if (!reader_) {
          if (next_path_ == paths_.size()) break;
          reader_ = std::make_unique<LineReader>(paths_[next_path_++]);
        }
        if (next_valid_line(*reader_, line_)) {
          value_ = join_tokens(tokenize(line_, tokenizer_));
          return;
        }
        reader_.reset();
      }
    } catch (...) {
      error_ = std::current_exception();
    }
    done_ = true;
  }

  const std::vector<std::string>& paths_;
  const TokenizerOptions& tokenizer_;
  size_t next_path_ = 0;
  std::unique_ptr<LineReader> reader_;
  std::string line_, value_;
  bool done_ = false;
  std::exception_ptr error_;
};

#else

[[noreturn]] void no_sentencepiece() {
  throw Error("this build has no SentencePiece, which subword units need (install libsentencepiece-dev and rebuild)");
}

#endif

}  // namespace

SubwordType parse_subword_type(const std::string& name) {
  if (name == "bpe") return SubwordType::bpe;
  if (name == "unigram") return SubwordType::unigram;
  throw Error("--subword-type must be bpe or unigram, not '" + name + "'");
}

const char* subword_type_name(SubwordType type) { return type == SubwordType::bpe ? "bpe" : "unigram"; }

Subwords::Subwords() = default;
Subwords::~Subwords() = default;
Subwords::Subwords(Subwords&&) noexcept = default;
Subwords& Subwords::operator=(Subwords&&) noexcept = default;

#ifdef RNNSEARCH_HAVE_SENTENCEPIECE

std::string Subwords::train(const std::vector<std::string>& paths, const TokenizerOptions& tokenizer, int size,
                            SubwordType type, size_t sample) {
  // The text is tokenized already: no normalisation (pieces must join back into exactly the
  // tokens), every character kept, and no special pieces besides <unk> (rnnsearch's own
  // vocabulary adds <pad>, <s> and </s>).
  const std::unordered_map<std::string, std::string> options = {
      {"model_type", subword_type_name(type)},
      {"vocab_size", std::to_string(size)},
      {"hard_vocab_limit", "false"},
      {"character_coverage", "1.0"},
      {"normalization_rule_name", "identity"},
      {"split_by_whitespace", "true"},
      {"bos_id", "-1"},
      {"eos_id", "-1"},
      {"pad_id", "-1"},
      {"unk_id", "0"},
      // A bounded sample keeps SentencePiece's memory and time independent of the corpus size.
      {"input_sentence_size", std::to_string(sample)},
      {"shuffle_input_sentence", "true"},
      {"num_threads", "1"},
      {"minloglevel", "2"}};
  FileSentences sentences(paths, tokenizer);
  std::string model;
  const auto status = sentencepiece::SentencePieceTrainer::Train(options, &sentences, &model);
  sentences.rethrow_error();
  if (!status.ok()) throw Error("learning subword units: " + status.ToString());
  return model;
}

Subwords Subwords::load(const std::string& path) {
  Subwords subwords;
  subwords.processor_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = subwords.processor_->Load(path);
  if (!status.ok()) throw Error(located(path, 0, "not a SentencePiece model: " + status.ToString()));
  // The API does not name the model type, but only unigram models have n-best segmentations.
  std::vector<std::vector<std::string>> unused;
  subwords.cuts_words_alone_ = !subwords.processor_->NBestEncode("", 1, &unused).ok();
  return subwords;
}

void Subwords::restrict_to(const std::vector<std::string>& pieces) {
  if (identity()) return;
  const std::vector<std::string_view> views(pieces.begin(), pieces.end());
  const auto status = processor_->SetVocabulary(views);
  if (!status.ok()) throw Error("restricting the subword model to the vocabulary: " + status.ToString());
}

#else

void Subwords::restrict_to(const std::vector<std::string>&) {}

std::string Subwords::train(const std::vector<std::string>&, const TokenizerOptions&, int, SubwordType, size_t) {
  no_sentencepiece();
}

Subwords Subwords::load(const std::string& path) {
  throw Error(located(path, 0, "a SentencePiece model, but this build has no SentencePiece (install "
                               "libsentencepiece-dev and rebuild)"));
}

#endif

std::vector<std::string> Subwords::encode(const std::vector<std::string>& words,
                                          std::vector<int>* word_of_piece) const {
  if (identity()) {
    if (word_of_piece) {
      word_of_piece->resize(words.size());
      std::iota(word_of_piece->begin(), word_of_piece->end(), 0);
    }
    return words;
  }
  std::vector<std::string> pieces;
#ifdef RNNSEARCH_HAVE_SENTENCEPIECE
  const auto status = processor_->Encode(join_tokens(words), &pieces);
  if (!status.ok()) throw Error("subword encoding: " + status.ToString());
#endif
  if (word_of_piece) join_pieces(pieces, false, word_of_piece);
  return pieces;
}

PieceCache::PieceCache(const Subwords& subwords, size_t capacity) : subwords_(subwords), capacity_(capacity) {}

std::vector<std::string> PieceCache::encode(const std::vector<std::string>& words) {
  // A "▁" in the text itself joins SentencePiece's word boundaries in ways a word alone
  // does not show: such a sentence is cut whole.
  if (!subwords_.cuts_words_alone() ||
      std::any_of(words.begin(), words.end(),
                  [](const std::string& word) { return word.find(kWordStart) != std::string::npos; }))
    return subwords_.encode(words);
  std::vector<std::string> pieces;
  for (const std::string& word : words) {
    auto known = pieces_.find(word);
    if (known == pieces_.end()) {
      std::vector<std::string> word_pieces = subwords_.encode({word});
      if (pieces_.size() == capacity_) {  // full: rare words are cut each time they come
        pieces.insert(pieces.end(), word_pieces.begin(), word_pieces.end());
        continue;
      }
      known = pieces_.emplace(word, std::move(word_pieces)).first;
    }
    pieces.insert(pieces.end(), known->second.begin(), known->second.end());
  }
  return pieces;
}

WordJoin word_join(const std::string& token, bool identity) {
  if (identity || token.empty() || starts_word(token) || token == "<unk>" || token == "<s>" || token == "</s>" ||
      token == "<pad>")
    return kStartsWord;
  int32_t i = 0;
  UChar32 c;
  U8_NEXT(token.data(), i, static_cast<int32_t>(token.size()), c);
  return c >= 0 && u_isalnum(c) ? kLetter : kOther;
}

std::vector<std::string> join_pieces(const std::vector<std::string>& pieces, bool identity,
                                     std::vector<int>* word_of_piece) {
  std::vector<std::string> words;
  if (word_of_piece) word_of_piece->clear();
  bool after_unk = false;
  for (const std::string& piece : pieces) {
    // <unk> (an id the model emits, not a piece of text) is a word of its own, which
    // --replace-unk can then replace with a source word.
    const bool unk = piece == "<unk>";
    const bool start = identity || starts_word(piece) || words.empty() || unk || after_unk;
    after_unk = unk;
    const std::string text = !identity && starts_word(piece) ? piece.substr(kWordStartBytes) : piece;
    // A lone "▁" begins a word whose text comes with the next piece.
    if (start && !(words.size() && words.back().empty())) words.emplace_back();
    words.back() += text;
    if (word_of_piece) word_of_piece->push_back(static_cast<int>(words.size()) - 1);
  }
  if (!words.empty() && words.back().empty()) words.pop_back();  // a trailing lone "▁"
  if (word_of_piece)
    for (int& w : *word_of_piece) w = std::min(w, std::max(0, static_cast<int>(words.size()) - 1));
  return words;
}

}  // namespace rnnsearch
