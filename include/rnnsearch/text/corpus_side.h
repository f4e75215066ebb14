#pragma once
// One side of a training corpus, flat (issue 31): the ids of every sentence one after the
// other, 16-bit when the vocabulary has at most 65,536 entries (32-bit otherwise), and where
// each sentence starts. About 2 bytes a token and 8 a sentence, where a std::vector<int> per
// sentence took 4 a token and ~40 a sentence (its header and its allocation).
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <vector>

namespace rnnsearch {

// A sentence's ids, read in place from a CorpusSide (valid while the side is unchanged).
class SentenceIds {
 public:
  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = int;
    using difference_type = std::ptrdiff_t;
    using pointer = const int*;
    using reference = int;  // ids are read, never referred to

    const_iterator() = default;
    const_iterator(const SentenceIds* ids, size_t i) : ids_(ids), i_(i) {}
    int operator*() const { return (*ids_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++i_;
      return before;
    }
    bool operator==(const const_iterator& other) const { return i_ == other.i_; }
    bool operator!=(const const_iterator& other) const { return i_ != other.i_; }

   private:
    const SentenceIds* ids_ = nullptr;
    size_t i_ = 0;
  };

  SentenceIds(const uint16_t* narrow, const uint32_t* wide, size_t size) : narrow_(narrow), wide_(wide), size_(size) {}
  size_t size() const { return size_; }
  int operator[](size_t i) const { return narrow_ ? narrow_[i] : static_cast<int>(wide_[i]); }
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }
  std::vector<int> to_vector() const { return {begin(), end()}; }

 private:
  const uint16_t* narrow_;  // the ids when 16-bit, else null and wide_ has them
  const uint32_t* wide_;
  size_t size_;
};

// Its arrays are its own (built with push_back) or borrowed from memory kept alive by an
// owner (a memory-mapped cache file: view()).
class CorpusSide {
 public:
  CorpusSide() : CorpusSide(SIZE_MAX) {}  // any id, 32-bit
  // Holds ids below vocab_size: 16-bit when they all fit.
  explicit CorpusSide(size_t vocab_size);
  // The side whose `sentences` + 1 starts and ids (uint16 when `narrow`, else uint32) are
  // at `starts` and `ids`, which stay valid as long as `owner` lives. Read-only.
  static CorpusSide view(const uint64_t* starts, size_t sentences, const void* ids, bool narrow,
                         std::shared_ptr<const void> owner);

  // Appends a sentence; throws std::invalid_argument for an id outside [0, vocab_size), or
  // on a view.
  void push_back(const std::vector<int>& ids);
  // Appends the sentences of `other`, a side of the same vocabulary size or a smaller one of
  // the same width; throws std::invalid_argument otherwise, or on a view.
  void append(const CorpusSide& other);
  size_t size() const { return sentences_; }
  bool empty() const { return size() == 0; }
  size_t length(size_t k) const { return starts()[k + 1] - starts()[k]; }  // sentence k's ids
  SentenceIds operator[](size_t k) const;
  bool operator==(const CorpusSide& other) const;  // the same sentences, whatever the id width

  // The arrays as stored, for writing them out: size() + 1 starts (the last = the number of
  // ids), then the ids, 2 bytes each when narrow(), else 4.
  bool narrow() const { return narrow_; }
  const uint64_t* starts() const { return owner_ ? view_starts_ : owned_starts_.data(); }
  const void* ids() const;

 private:
  size_t vocab_size_;
  bool narrow_;
  size_t sentences_ = 0;
  std::vector<uint16_t> narrow_ids_;
  std::vector<uint32_t> wide_ids_;
  std::vector<uint64_t> owned_starts_ = {0};  // sentence k is ids starts[k] … starts[k + 1] − 1
  std::shared_ptr<const void> owner_;          // set for a view
  const uint64_t* view_starts_ = nullptr;
  const void* view_ids_ = nullptr;
};

}  // namespace rnnsearch
