#include "rnnsearch/text/corpus_side.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rnnsearch {

CorpusSide::CorpusSide(size_t vocab_size) : vocab_size_(vocab_size), narrow_(vocab_size <= 65536) {}

CorpusSide CorpusSide::view(const uint64_t* starts, size_t sentences, const void* ids, bool narrow,
                            std::shared_ptr<const void> owner) {
  CorpusSide side(narrow ? 65536 : SIZE_MAX);
  side.sentences_ = sentences;
  side.owner_ = std::move(owner);
  side.view_starts_ = starts;
  side.view_ids_ = ids;
  return side;
}

const void* CorpusSide::ids() const {
  if (owner_) return view_ids_;
  return narrow_ ? static_cast<const void*>(narrow_ids_.data()) : wide_ids_.data();
}

void CorpusSide::push_back(const std::vector<int>& ids) {
  if (owner_) throw std::invalid_argument("CorpusSide: a view is read-only");
  for (int id : ids)
    if (id < 0 || static_cast<size_t>(id) >= vocab_size_)
      throw std::invalid_argument("CorpusSide: id " + std::to_string(id) + " outside the vocabulary");
  if (narrow_)
    narrow_ids_.insert(narrow_ids_.end(), ids.begin(), ids.end());
  else
    wide_ids_.insert(wide_ids_.end(), ids.begin(), ids.end());
  owned_starts_.push_back(owned_starts_.back() + ids.size());
  ++sentences_;
}

void CorpusSide::append(const CorpusSide& other) {
  if (owner_) throw std::invalid_argument("CorpusSide: a view is read-only");
  if (other.narrow_ != narrow_ || other.vocab_size_ > vocab_size_)
    throw std::invalid_argument("CorpusSide: appending a side of another vocabulary");
  const uint64_t base = owned_starts_.back(), ids = other.starts()[other.size()];
  for (size_t k = 1; k <= other.size(); ++k) owned_starts_.push_back(base + other.starts()[k]);
  if (narrow_) {
    const auto* first = static_cast<const uint16_t*>(other.ids());
    narrow_ids_.insert(narrow_ids_.end(), first, first + ids);
  } else {
    const auto* first = static_cast<const uint32_t*>(other.ids());
    wide_ids_.insert(wide_ids_.end(), first, first + ids);
  }
  sentences_ += other.size();
}

SentenceIds CorpusSide::operator[](size_t k) const {
  const size_t start = starts()[k];
  return narrow_ ? SentenceIds(static_cast<const uint16_t*>(ids()) + start, nullptr, length(k))
                 : SentenceIds(nullptr, static_cast<const uint32_t*>(ids()) + start, length(k));
}

bool CorpusSide::operator==(const CorpusSide& other) const {
  if (size() != other.size() || !std::equal(starts(), starts() + size() + 1, other.starts())) return false;
  for (size_t k = 0; k < size(); ++k) {
    const SentenceIds mine = (*this)[k], theirs = other[k];
    if (!std::equal(mine.begin(), mine.end(), theirs.begin())) return false;
  }
  return true;
}

}  // namespace rnnsearch
