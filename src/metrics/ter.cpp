#include "rnnsearch/metrics/ter.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <unordered_map>

#include "rnnsearch/error.h"
#include "rnnsearch/metrics/signature.h"

namespace rnnsearch {

namespace {

constexpr int kMaxShiftSize = 10;         // words in a shifted block
constexpr int kMaxShiftDistance = 50;     // between the block in the hypothesis and in the reference
constexpr int kBeamWidth = 25;            // band half-width of the edit distance
constexpr int kMaxShiftCandidates = 1000;  // per segment
constexpr long long kInfinity = 10000000000000000LL;

// An edit operation turning the hypothesis into the reference: the words match, one is
// substituted, a reference word is inserted, a hypothesis word is deleted. 'x' marks a cell
// outside the band.
constexpr char kMatch = ' ', kSubstitute = 's', kInsert = 'i', kDelete = 'd', kOutside = 'x';

struct Cell {
  long long cost = kInfinity;
  char op = kOutside;
};
using Rows = std::vector<std::vector<Cell>>;

// The banded Levenshtein distance of hypotheses of one length against one reference. Row i
// depends only on row i−1 and hypothesis word i, so a hypothesis that shares its first p words
// with one already computed shares its rows 0..p too: a shift leaves the words in front of it
// alone, and only the rows after them are filled again.
class BandedEditDistance {
 public:
  BandedEditDistance(const std::vector<int>& reference, size_t hyp_length)
      : reference_(reference), hyp_length_(hyp_length) {
    length_ratio_ = hyp_length ? double(reference.size()) / double(hyp_length) : 1.0;
    beam_ = kBeamWidth < length_ratio_ / 2 ? static_cast<long>(std::ceil(length_ratio_ / 2 + kBeamWidth)) : kBeamWidth;
  }

  // rows[0..from] hold those of `hypothesis`'s first `from` words; fills the others and
  // returns the distance. Rows up to `from` may come from `shared` instead (nullptr: none).
  long long fill(const std::vector<int>& hypothesis, Rows& rows, size_t from, const Rows* shared = nullptr) const {
    const size_t width = reference_.size() + 1;
    rows.resize(hyp_length_ + 1);
    if (from == 0) {
      rows[0].resize(width);
      for (size_t j = 0; j < width; ++j) rows[0][j] = {static_cast<long long>(j), kInsert};
    }
    for (size_t i = from + 1; i <= hyp_length_; ++i) {
      const std::vector<Cell>& above = (shared && i - 1 <= from) ? (*shared)[i - 1] : rows[i - 1];
      std::vector<Cell>& row = rows[i];
      row.assign(width, Cell{});
      const long diagonal = static_cast<long>(std::floor(double(i) * length_ratio_));
      const size_t first = static_cast<size_t>(std::max(0L, diagonal - beam_));
      const size_t end = i == hyp_length_ ? width : static_cast<size_t>(std::min<long>(width, diagonal + beam_));
      for (size_t j = first; j < end; ++j) {
        if (j == 0) {
          row[0] = {above[0].cost + 1, kDelete};
          continue;
        }
        const bool same = hypothesis[i - 1] == reference_[j - 1];
        // The first of equal costs wins: match/substitution, deletion, insertion (tercom's
        // preference with insertion and deletion swapped, as the alignment reads the trace
        // the other way round).
        const Cell options[] = {{above[j - 1].cost + (same ? 0 : 1), same ? kMatch : kSubstitute},
                                {above[j].cost + 1, kDelete},
                                {row[j - 1].cost + 1, kInsert}};
        for (const Cell& option : options)
          if (row[j].cost > option.cost) row[j] = option;
      }
    }
    return (shared && hyp_length_ <= from ? (*shared)[hyp_length_] : rows[hyp_length_])[reference_.size()].cost;
  }

  // The operations along the best path from the start, of a completely filled matrix.
  std::string trace(const Rows& rows) const {
    std::string ops;
    size_t i = hyp_length_, j = reference_.size();
    while (i > 0 || j > 0) {
      const char op = rows[i][j].op;
      ops += op;
      if (op == kMatch || op == kSubstitute) {
        --i;
        --j;
      } else if (op == kInsert) {
        --j;
      } else if (op == kDelete) {
        --i;
      } else {
        throw Error("TER: the edit distance left its band");  // tercom's band never does on real text
      }
    }
    std::reverse(ops.begin(), ops.end());
    return ops;
  }

 private:
  const std::vector<int>& reference_;
  size_t hyp_length_;
  double length_ratio_;
  long beam_;
};

// Reading the trace as the reference rewritten into the hypothesis (insertions and deletions
// swapped): for each reference position the hypothesis position it is aligned with (the one
// before, or −1, for a reference word the hypothesis lacks), and which words of each side
// are errors.
struct TraceAlignment {
  std::vector<int> hyp_of_ref;
  std::vector<bool> ref_error, hyp_error;
};

TraceAlignment align(const std::string& trace) {
  TraceAlignment a;
  int hyp = -1;
  for (char op : trace) {
    if (op == kMatch || op == kSubstitute) {
      ++hyp;
      a.hyp_of_ref.push_back(hyp);
      a.hyp_error.push_back(op == kSubstitute);
      a.ref_error.push_back(op == kSubstitute);
    } else if (op == kDelete) {  // a hypothesis word without a reference word
      ++hyp;
      a.hyp_error.push_back(true);
    } else {  // kInsert: a reference word without a hypothesis word
      a.hyp_of_ref.push_back(hyp);
      a.ref_error.push_back(true);
    }
  }
  return a;
}

// Python's words[a:b] (a, b clamped to the list).
void append_slice(std::vector<int>& out, const std::vector<int>& words, long a, long b) {
  const long size = static_cast<long>(words.size());
  a = std::clamp(a, 0L, size);
  b = std::clamp(b, 0L, size);
  if (a < b) out.insert(out.end(), words.begin() + a, words.begin() + b);
}

// The block words[start, start+length) moved to `target` (a position of the words as they
// were). A target inside the block or just after it moves the block after the `target −
// start` words that follow it, as sacreBLEU does.
std::vector<int> shifted(const std::vector<int>& words, long start, long length, long target) {
  std::vector<int> result;
  result.reserve(words.size());
  const long size = static_cast<long>(words.size());
  if (target < start) {
    append_slice(result, words, 0, target);
    append_slice(result, words, start, start + length);
    append_slice(result, words, target, start);
    append_slice(result, words, start + length, size);
  } else if (target > start + length) {
    append_slice(result, words, 0, start);
    append_slice(result, words, start + length, target);
    append_slice(result, words, start, start + length);
    append_slice(result, words, target, size);
  } else {
    append_slice(result, words, 0, start);
    append_slice(result, words, start + length, length + target);
    append_slice(result, words, start, start + length);
    append_slice(result, words, length + target, size);
  }
  return result;
}

struct Shift {
  long long gain = 0;  // edit distance before minus after
  long length = 0, start = 0, target = 0;
  std::vector<int> words;

  // The ranking of the header: larger gain, longer block, earlier block, earlier target.
  bool better_than(const Shift& other) const {
    if (gain != other.gain) return gain > other.gain;
    if (length != other.length) return length > other.length;
    if (start != other.start) return start < other.start;
    return target < other.target;
  }
};

size_t common_prefix(const std::vector<int>& a, const std::vector<int>& b) {
  size_t p = 0;
  while (p < a.size() && p < b.size() && a[p] == b[p]) ++p;
  return p;
}

// The best shift of `hypothesis` (none if no candidate), counting the candidates tried into
// `checked`.
std::optional<Shift> best_shift(const std::vector<int>& hypothesis, const std::vector<int>& reference,
                                const BandedEditDistance& distance, int& checked) {
  Rows rows, scratch;
  const long long before = distance.fill(hypothesis, rows, 0);
  const TraceAlignment a = align(distance.trace(rows));
  const long hyp_size = static_cast<long>(hypothesis.size()), ref_size = static_cast<long>(reference.size());
  auto any_error = [](const std::vector<bool>& errors, long start, long length) {
    const long end = std::min(start + length, static_cast<long>(errors.size()));
    return std::any_of(errors.begin() + std::min(start, end), errors.begin() + end, [](bool e) { return e; });
  };

  std::optional<Shift> best;
  // Called for each block hypothesis[start_h, +length) = reference[start_r, +length); false
  // once the candidate budget is spent.
  auto try_block = [&](long start_h, long start_r, long length) {
    if (!any_error(a.hyp_error, start_h, length) || !any_error(a.ref_error, start_r, length)) return true;
    const long aligned = a.hyp_of_ref[start_r];
    if (start_h <= aligned && aligned < start_h + length) return true;  // it would move within itself
    long previous_target = -1;
    for (long offset = -1; offset < length; ++offset) {
      long target;
      if (start_r + offset == -1)
        target = 0;
      else if (start_r + offset < static_cast<long>(a.hyp_of_ref.size()))
        target = a.hyp_of_ref[start_r + offset] + 1;
      else
        break;
      if (target == previous_target) continue;
      previous_target = target;
      Shift candidate{0, length, start_h, target, shifted(hypothesis, start_h, length, target)};
      const size_t prefix = common_prefix(hypothesis, candidate.words);
      candidate.gain = before - distance.fill(candidate.words, scratch, prefix, &rows);
      ++checked;
      if (!best || candidate.better_than(*best)) best = std::move(candidate);
    }
    return checked < kMaxShiftCandidates;
  };

  for (long start_h = 0; start_h < hyp_size; ++start_h)
    for (long start_r = 0; start_r < ref_size; ++start_r) {
      if (std::labs(start_r - start_h) > kMaxShiftDistance) continue;
      for (long length = 0; hypothesis[start_h + length] == reference[start_r + length] && length < kMaxShiftSize;) {
        ++length;
        if (!try_block(start_h, start_r, length)) return best;
        if (start_h + length == hyp_size || start_r + length == ref_size) break;
      }
    }
  return best;
}

}  // namespace

std::pair<long, long> translation_edit_rate(const std::vector<std::string>& hypothesis,
                                            const std::vector<std::string>& reference) {
  if (reference.empty()) return {static_cast<long>(hypothesis.size()), 0};
  // Words as numbers, so that comparing and copying them is cheap.
  std::unordered_map<std::string, int> ids;
  auto numbered = [&](const std::vector<std::string>& words) {
    std::vector<int> result;
    for (const std::string& word : words) result.push_back(ids.emplace(word, static_cast<int>(ids.size())).first->second);
    return result;
  };
  std::vector<int> words = numbered(hypothesis);
  const std::vector<int> ref = numbered(reference);
  const BandedEditDistance distance(ref, words.size());
  long shifts = 0;
  int checked = 0;
  for (;;) {
    std::optional<Shift> shift = best_shift(words, ref, distance, checked);
    if (checked >= kMaxShiftCandidates || !shift || shift->gain <= 0) break;
    ++shifts;
    words = std::move(shift->words);
  }
  Rows rows;
  return {shifts + distance.fill(words, rows, 0), static_cast<long>(reference.size())};
}

TerResult corpus_ter(const std::vector<std::string>& hypotheses,
                     const std::vector<std::vector<std::string>>& references, const TercomOptions& options) {
  check_reference_streams("TER", hypotheses.size(), references);
  auto tokenized = [&](std::string_view line) { return tokenize_tercom(rstrip_python(line), options); };
  TerResult result;
  for (size_t s = 0; s < hypotheses.size(); ++s) {
    const std::vector<std::string> hypothesis = split_python_whitespace(tokenized(hypotheses[s]));
    long fewest = -1, lengths = 0;
    for (const auto& stream : references) {
      // The reference tokenized twice, as sacreBLEU does (see the header).
      const std::vector<std::string> reference = split_python_whitespace(tokenized(tokenized(stream[s])));
      const auto [edits, length] = translation_edit_rate(hypothesis, reference);
      lengths += length;
      if (fewest < 0 || edits < fewest) fewest = edits;
    }
    result.edits += std::max(fewest, 0L);
    result.ref_length += references.empty() ? 0.0 : double(lengths) / double(references.size());
  }
  if (result.ref_length > 0)
    result.score = 100 * (double(result.edits) / result.ref_length);
  else
    result.score = result.edits > 0 ? 100.0 : 0.0;
  return result;
}

std::string ter_signature(const TercomOptions& options, size_t references) {
  return signature_line("TER", references,
                        {{"case", options.case_sensitive ? "mixed" : "lc"},
                         {"tok", "tercom"},
                         {"norm", options.normalized ? "yes" : "no"},
                         {"punct", options.no_punct ? "no" : "yes"},
                         {"asian", options.asian_support ? "yes" : "no"}});
}

}  // namespace rnnsearch
