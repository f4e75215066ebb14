#pragma once
// Subword units (docs/design.md §3) with SentencePiece: a tokenized sentence (words joined
// by spaces) becomes pieces, a piece that starts with "▁" (U+2581) beginning a word:
//
//   "ein kleines mädchen"  ->  ▁ein ▁klein es ▁mädchen
//
// The model sees pieces; everything users see (translations, n-best lists, alignments,
// heatmaps, BLEU) is whole words again, so subword and word-level models compare directly.
// A default-constructed Subwords is the identity: pieces = words (word-level models).
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "rnnsearch/text/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace rnnsearch {

enum class SubwordType { bpe, unigram };
SubwordType parse_subword_type(const std::string& name);  // throws rnnsearch::Error
const char* subword_type_name(SubwordType type);

class Subwords {
 public:
  Subwords();  // the identity
  ~Subwords();
  Subwords(Subwords&&) noexcept;
  Subwords& operator=(Subwords&&) noexcept;

  // Learns a model of about `size` pieces from the lines of `paths`, tokenized as `tokenizer`
  // says, one file after the other (a joint model reads both sides); returns its bytes (the
  // SentencePiece model file). The files are streamed: SentencePiece keeps a uniform random
  // sample of `sample` sentences (reservoir sampling with its own fixed seed, so the same text
  // gives the same model), or every sentence when there are no more than that or sample is 0.
  // Throws rnnsearch::Error naming the file (and the line, for invalid UTF-8).
  static std::string train(const std::vector<std::string>& paths, const TokenizerOptions& tokenizer, int size,
                           SubwordType type, size_t sample);
  // Reads a model file written from train(); throws rnnsearch::Error naming the file.
  static Subwords load(const std::string& path);

  // Encodes into the pieces of `pieces` alone (SentencePiece's SetVocabulary, as subword-nmt's
  // --vocabulary): a piece the model knows but the vocabulary lacks (a BPE merge that only
  // leads to longer pieces, or one too rare) is cut into smaller pieces the vocabulary has,
  // instead of becoming <unk>. Nothing for the identity.
  void restrict_to(const std::vector<std::string>& pieces);
  bool identity() const { return !processor_; }
  // Does a word get the same pieces wherever it stands? True for BPE, whose merges compare
  // the scores of single pieces; unigram's Viterbi adds scores up along the sentence, so an
  // exact tie ("000": 0|00 or 00|0) may break differently after other words.
  bool cuts_words_alone() const { return cuts_words_alone_; }
  // Pieces of tokenized words; word_of_piece (when given) receives each piece's word index.
  std::vector<std::string> encode(const std::vector<std::string>& words,
                                  std::vector<int>* word_of_piece = nullptr) const;

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  bool cuts_words_alone_ = false;
};

// Subwords::encode for a whole corpus: with a model that cuts words alone (BPE), remembers
// the pieces of up to `capacity` distinct words, so that the words a corpus repeats are cut
// once. No piece spans a word boundary, nor does a run of unknown characters (the "▁" piece
// of the next word ends it), so the pieces are exactly Subwords::encode's. Not thread-safe:
// one per reading thread.
class PieceCache {
 public:
  explicit PieceCache(const Subwords& subwords, size_t capacity = size_t{1} << 19);
  std::vector<std::string> encode(const std::vector<std::string>& words);

 private:
  const Subwords& subwords_;
  size_t capacity_;
  std::unordered_map<std::string, std::vector<std::string>> pieces_;
};

// Words of pieces: a piece that starts with "▁" begins a word, others continue the current
// one (pieces of word-level models are words already, so each is its own word when
// `identity`). word_of_piece (when given) receives each piece's word index.
std::vector<std::string> join_pieces(const std::vector<std::string>& pieces, bool identity,
                                     std::vector<int>* word_of_piece = nullptr);

// How join_pieces adds this vocabulary token to the text before it: kStartsWord (a piece with
// "▁", a word-level model's token, <unk>, <s>, </s>, <pad>), or it continues the word before it
// with a letter or digit (kLetter: "e" after "▁Hund") or with anything else (kOther: "." or "-").
enum WordJoin : char { kStartsWord = 0, kOther = 1, kLetter = 2 };
WordJoin word_join(const std::string& token, bool identity);

}  // namespace rnnsearch
