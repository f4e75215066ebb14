#include "rnnsearch/text/corpus_side.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rnnsearch {

CorpusSide::CorpusSide(size_t vocab_size) : vocab_size_(vocab_size), narrow_(vocab_size <= 65536) {}

void CorpusSide::push_back(const std::vector<int>& ids) {
  for (int id : ids)
    if (id < 0 || static_cast<size_t>(id) >= vocab_size_)
      throw std::invalid_argument("CorpusSide: id " + std::to_string(id) + " outside the vocabulary");
  if (narrow_)
    narrow_ids_.insert(narrow_ids_.end(), ids.begin(), ids.end());
  else
    wide_ids_.insert(wide_ids_.end(), ids.begin(), ids.end());
  starts_.push_back(starts_.back() + ids.size());
}

SentenceIds CorpusSide::operator[](size_t k) const {
  const size_t start = starts_[k];
  return narrow_ ? SentenceIds(narrow_ids_.data() + start, nullptr, length(k))
                 : SentenceIds(nullptr, wide_ids_.data() + start, length(k));
}

bool CorpusSide::operator==(const CorpusSide& other) const {
  if (starts_ != other.starts_) return false;
  for (size_t k = 0; k < size(); ++k) {
    const SentenceIds mine = (*this)[k], theirs = other[k];
    if (!std::equal(mine.begin(), mine.end(), theirs.begin())) return false;
  }
  return true;
}

}  // namespace rnnsearch
