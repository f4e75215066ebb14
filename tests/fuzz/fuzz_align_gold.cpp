// Gold alignments in the talp format of `rnnsearch align-eval --gold` (1-based "i-j" sure,
// "ipj" possible links; align/links.h) scored against Pharaoh links (align/aer.h): the input
// is the gold file, then after the first NUL byte the links file; its first byte picks 0- or
// 1-based gold and --tail. Every gold line that parses has its sure links among its possible
// ones; every accepted pair of files gives AER, precision and recall in [0, 1] (or NaN where
// nothing is counted).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "rnnsearch/align/aer.h"
#include "rnnsearch/error.h"

using namespace rnnsearch;
using namespace rnnsearch::align;

namespace {

void check_rate(double rate) {
  if (!std::isnan(rate) && !(rate >= 0 && rate <= 1)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const bool zero_based = data[0] & 1, tail = data[0] & 2;
  const std::string input(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t nul = input.find('\0');
  const std::string gold_path = "gold.talp", links_path = "links.txt";
  const std::string gold_text = input.substr(0, nul), links_text = nul == std::string::npos ? "" : input.substr(nul + 1);
  try {
    const std::vector<std::string> gold = fuzz::lines(gold_text, gold_path, true);
    for (size_t k = 0; k < gold.size(); ++k) {
      const GoldLinks g = parse_gold(gold[k], zero_based, gold_path, k + 1);
      const Links sure = sorted_links(g.sure), possible = sorted_links(g.possible);
      if (!std::includes(possible.begin(), possible.end(), sure.begin(), sure.end())) std::abort();
      for (const Link& link : possible)
        if (link.source < 0 || link.target < 0) std::abort();
    }
    const AlignmentCounts counts =
        evaluate_alignments(gold, fuzz::lines(links_text, links_path, true), zero_based, tail, gold_path, links_path);
    if (counts.links_sure > counts.links_possible || counts.links_possible > counts.links ||
        counts.sure > counts.possible || counts.sentences != gold.size())
      std::abort();
    check_rate(counts.aer());
    check_rate(counts.precision());
    check_rate(counts.recall());
    if (counts.summary().empty()) std::abort();
  } catch (const Error&) {
  }
  return 0;
}
