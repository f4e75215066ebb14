#include "rnnsearch/align/aer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>

#include "rnnsearch/error.h"

namespace rnnsearch::align {

namespace {

size_t common(const Links& a, const Links& b) {
  Links both;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(both));
  return both.size();
}

double ratio(size_t numerator, size_t denominator) {
  return denominator ? static_cast<double>(numerator) / static_cast<double>(denominator)
                     : std::numeric_limits<double>::quiet_NaN();
}

std::string percent(double value) {
  if (std::isnan(value)) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", 100 * value);
  return text;
}

}  // namespace

void AlignmentCounts::add(const Links& unsorted, const GoldLinks& gold) {
  const Links a = sorted_links(unsorted), sure = sorted_links(gold.sure);
  Links possible;  // P ∪ S
  const Links given = sorted_links(gold.possible);
  std::set_union(given.begin(), given.end(), sure.begin(), sure.end(), std::back_inserter(possible));
  ++sentences;
  links += a.size();
  this->sure += sure.size();
  this->possible += possible.size();
  links_sure += common(a, sure);
  links_possible += common(a, possible);
}

double AlignmentCounts::aer() const {
  return links + sure ? 1.0 - ratio(links_sure + links_possible, links + sure) : std::numeric_limits<double>::quiet_NaN();
}
double AlignmentCounts::precision() const { return ratio(links_possible, links); }
double AlignmentCounts::recall() const { return ratio(links_sure, sure); }

std::string AlignmentCounts::summary() const {
  return "AER " + percent(aer()) + "  precision " + percent(precision()) + "  recall " + percent(recall()) + "  (" +
         std::to_string(sentences) + " sentences, " + std::to_string(links) + " links, " + std::to_string(sure) +
         " sure, " + std::to_string(possible) + " possible)";
}

AlignmentCounts evaluate_alignments(const std::vector<std::string>& gold_lines,
                                    const std::vector<std::string>& links_lines, bool gold_zero_based, bool tail,
                                    const std::string& gold_name, const std::string& links_name) {
  const size_t n = gold_lines.size(), m = links_lines.size();
  if (m < n || (m > n && !tail))
    throw Error(links_name + " has " + std::to_string(m) + " lines and " + gold_name + " " + std::to_string(n) +
                (m > n ? " (--tail scores its last " + std::to_string(n) + ")" : ""));
  const size_t offset = m - n;  // 0 unless tail
  AlignmentCounts counts;
  for (size_t k = 0; k < n; ++k)
    counts.add(parse_pharaoh(links_lines[offset + k], links_name, offset + k + 1),
               parse_gold(gold_lines[k], gold_zero_based, gold_name, k + 1));
  return counts;
}

}  // namespace rnnsearch::align
