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

  bool identity() const { return !processor_; }
  // Pieces of tokenized words; word_of_piece (when given) receives each piece's word index.
  std::vector<std::string> encode(const std::vector<std::string>& words,
                                  std::vector<int>* word_of_piece = nullptr) const;

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
};

// Words of pieces: a piece that starts with "▁" begins a word, others continue the current
// one (pieces of word-level models are words already, so each is its own word when
// `identity`). word_of_piece (when given) receives each piece's word index.
std::vector<std::string> join_pieces(const std::vector<std::string>& pieces, bool identity,
                                     std::vector<int>* word_of_piece = nullptr);

}  // namespace rnnsearch
