#pragma once
// Alignment error rate (Och & Ney 2003), precision and recall of links A against gold sure
// links S and possible links P (S ⊆ P), over a corpus: the counts are summed over its
// sentences, then
//
//   AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|),   precision = |A∩P| / |A|,   recall = |A∩S| / |S|
//
// (what `rnnsearch align-eval` prints; docs/aligning.md).
#include <string>
#include <vector>

#include "rnnsearch/align/links.h"

namespace rnnsearch::align {

struct AlignmentCounts {
  size_t sentences = 0;
  size_t links = 0, sure = 0, possible = 0;  // |A|, |S|, |P|
  size_t links_sure = 0, links_possible = 0;  // |A∩S|, |A∩P|

  // One sentence: its links and gold links (a sure link counts as possible even when
  // gold.possible lacks it).
  void add(const Links& links, const GoldLinks& gold);
  // NaN where the denominator is 0.
  double aer() const;
  double precision() const;
  double recall() const;
  // "AER 27.40  precision 77.60  recall 68.00  (200 sentences, 3000 links, 2500 sure, 3300
  // possible)": percentages with 2 decimals ("n/a" for NaN).
  std::string summary() const;
};

// The counts of links_lines (Pharaoh, 0-based) against gold_lines (parse_gold), line by line.
// Both must have as many lines, unless tail: then links_lines may have more, and its last
// gold_lines.size() lines are scored (an aligner run on training text with the gold sentences
// appended). The names place errors: "LINKS:LINE: bad link ...", "LINKS has N lines, GOLD M".
AlignmentCounts evaluate_alignments(const std::vector<std::string>& gold_lines,
                                    const std::vector<std::string>& links_lines, bool gold_zero_based, bool tail,
                                    const std::string& gold_name, const std::string& links_name);

}  // namespace rnnsearch::align
