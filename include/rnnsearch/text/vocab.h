#pragma once
// Vocabulary of docs/design.md §2/§3: one token per line, line k is id k, ids 0..3 are
// <pad> <unk> <s> </s>; then training tokens seen at least min_count times, most frequent
// first, ties in code-point (= UTF-8 byte) order.
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

namespace rnnsearch {

// How often each token occurs in a text: what a vocabulary is built from, so that building
// one holds each distinct token once, never the text.
using TokenCounts = std::unordered_map<std::string, long>;

class Vocab {
 public:
  static constexpr int kPad = 0, kUnk = 1, kBos = 2, kEos = 3;

  Vocab();  // only the four specials

  // max_size 0 = no limit; it counts the specials.
  static Vocab build(const TokenCounts& counts, int min_count = 2, size_t max_size = 0);
  // The same from tokenized sentences held in memory (small texts, tests).
  static Vocab build(const std::vector<std::vector<std::string>>& sentences, int min_count = 2,
                     size_t max_size = 0);
  // Throws rnnsearch::Error naming the file and line on a duplicate token, an empty line, or
  // a file whose first four lines are not the specials.
  static Vocab load(const std::string& path);
  void save(const std::string& path) const;  // atomic: temporary file + rename

  size_t size() const { return tokens_.size(); }
  bool operator==(const Vocab& other) const { return tokens_ == other.tokens_; }  // the same tokens, in order
  int id(const std::string& token) const;  // kUnk when absent
  const std::string& token(int id) const { return tokens_.at(static_cast<size_t>(id)); }
  const std::vector<std::string>& tokens() const { return tokens_; }  // by id

  std::vector<int> encode(const std::vector<std::string>& tokens) const;  // appends kEos
  // Stops at the first kEos; skips kPad and kBos.
  std::vector<std::string> decode(const std::vector<int>& ids) const;

 private:
  void add(const std::string& token);
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int> ids_;
};

}  // namespace rnnsearch
