#pragma once
// `rnnsearch align --hmm` (align/hmm.h's aligners, one each way) and what it learns, kept for
// later: `align --hmm --save-hmm DIR` writes both directions' tables, the options they were
// trained with and the word lists that number their words; `align --hmm-tables DIR`, Python's
// hmm_align(tables=DIR) and the server's POST /align (serve --hmm-tables DIR) align new pairs
// with them without training. A word never seen in training is unseen with every word
// (HmmAligner::kUnseen), so its links come from the jumps around it.
//
// DIR holds hmm.npz — forward.row and forward.target (int64), forward.prob and forward.jump
// (float32), the same for reverse, and the scalars null_probability, stem (float32) and hmm
// (int64, 0: IBM model 1 only) — and source.words, target.words: the counted forms (lowercased
// and stemmed, hmm.h), one per line, line n the word of id n (the source's from 1: 0 is ∅).
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "rnnsearch/align/hmm.h"

namespace rnnsearch::align {

class HmmTables {
 public:
  // Both directions trained on the usable pairs (as hmm_align below); iteration(kind, k), when
  // given, is told after each iteration.
  HmmTables(const std::vector<std::string>& src_lines, const std::vector<std::string>& tgt_lines,
            const HmmOptions& options, const std::function<void(const char* kind, int k)>& iteration = nullptr);
  // Tables saved in dir; throws rnnsearch::Error naming the file when one is missing, unreadable
  // or inconsistent.
  explicit HmmTables(const std::string& dir);
  ~HmmTables();
  HmmTables(HmmTables&&) noexcept;

  // Writes dir (created if need be; each file written to a temporary name and renamed).
  void save(const std::string& dir) const;

  // The links of each pair, read off the two directions' posteriors as hmm_align does; a pair
  // with an empty side, invalid UTF-8 or a side longer than max_length words is unaligned, with
  // the Scorer's warning. Pairs are aligned `threads` at a time; src_lines[k] is input line
  // first_line + k (AlignedPair::line).
  std::vector<AlignedPair> align(const std::vector<std::string>& src_lines, const std::vector<std::string>& tgt_lines,
                                 const AlignMethod& method, std::optional<Symmetrization> symmetrize, int max_length,
                                 int threads, size_t first_line = 0) const;

  // The options the tables were trained with (null_probability and stem are what aligning uses).
  const HmmOptions& options() const { return options_; }

 private:
  // The ids of a line's counted words; `unseen` for a word not in numbers.
  std::vector<int> ids(const std::string& line, const std::unordered_map<std::string, int>& numbers, int unseen) const;

  HmmOptions options_;
  WordIdCorpus words_;  // the word lists only (forms and sizes): the pairs are not kept
  std::unordered_map<std::string, int> source_ids_, target_ids_;
  std::unique_ptr<HmmAligner> forward_, reverse_;
};

// `rnnsearch align --hmm`: HmmTables trained on the pairs, then the same pairs aligned with
// them (`symmetrize` resolved as resolved_symmetrization does with two models). A pair with an
// empty side, invalid UTF-8 or a side longer than options.max_length words is left out of
// training and unaligned, with the warning the Scorer gives it (AlignedPair::target_side:
// which line it is about).
std::vector<AlignedPair> hmm_align(const std::vector<std::string>& src_lines, const std::vector<std::string>& tgt_lines,
                                   const HmmOptions& options, const AlignMethod& method,
                                   std::optional<Symmetrization> symmetrize,
                                   const std::function<void(const char* kind, int k)>& iteration = nullptr);

}  // namespace rnnsearch::align
