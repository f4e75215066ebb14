#pragma once
// translate --replace-unk: each <unk> of a translation becomes the source word it attends
// to most (the largest weight of its word-alignment row, </s> excluded), or that word's
// translation from a dictionary (--unk-dictionary: lines "source target"), as in Luong et
// al. (2015). Names, numbers and rare words the vocabulary lacks come through instead of
// <unk>.
#include <string>
#include <unordered_map>
#include <vector>

#include "rnnsearch/decode/hypothesis.h"

namespace rnnsearch {

class UnkReplacement {
 public:
  UnkReplacement() = default;  // source words copied as they are
  // Reads the dictionary; throws rnnsearch::Error naming the file and line of a bad entry.
  static UnkReplacement load(const std::string& dictionary_path);

  // Replaces the <unk> words of h.words; h.alignment must be the word alignment over source.
  void apply(const std::vector<std::string>& source, Hypothesis& h) const;

 private:
  std::unordered_map<std::string, std::string> dictionary_;
};

}  // namespace rnnsearch
