// Pharaoh link lines (align/links.h), as `rnnsearch align` writes them and align-eval and
// train --guided-alignment read them: the input is a links file, then after the first NUL
// byte a second one (a reverse direction's, source-target already). Each line that parses
// prints back to itself parsed again, and each pair of lines is symmetrized every way: the
// result lies between the intersection and the union.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_input.h"
#include "rnnsearch/align/links.h"
#include "rnnsearch/error.h"

using namespace rnnsearch;
using namespace rnnsearch::align;

namespace {

std::vector<Links> parsed_file(const std::string& contents, const std::string& path) {
  std::vector<Links> lines;
  const std::vector<std::string> text = fuzz::lines(contents, path, true);
  for (size_t k = 0; k < text.size(); ++k) {
    Links links = parse_pharaoh(text[k], path, k + 1);
    const Links sorted = sorted_links(links);
    if (parse_pharaoh(pharaoh_text(sorted), "again", k + 1) != sorted) std::abort();
    if (!std::is_sorted(sorted.begin(), sorted.end())) std::abort();
    for (const Link& link : links)
      if (link.source < 0 || link.target < 0) std::abort();
    lines.push_back(sorted);
  }
  return lines;
}

bool includes(const Links& outer, const Links& inner) {
  return std::includes(outer.begin(), outer.end(), inner.begin(), inner.end());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string forward_text = input.substr(0, nul), reverse_text = nul == std::string::npos ? "" : input.substr(nul + 1);
  try {
    const std::vector<Links> forward = parsed_file(forward_text, "forward.links");
    const std::vector<Links> reverse = parsed_file(reverse_text, "reverse.links");
    for (size_t k = 0; k < std::min(forward.size(), reverse.size()); ++k) {
      int source_words = 0, target_words = 0;
      for (const Links* links : {&forward[k], &reverse[k]})
        for (const Link& link : *links) {
          source_words = std::max(source_words, link.source + 1);
          target_words = std::max(target_words, link.target + 1);
        }
      if (static_cast<double>(source_words) * target_words > 1e6) continue;  // symmetrize walks the grid
      const Links both = symmetrize(forward[k], reverse[k], source_words, target_words, Symmetrization::intersect);
      const Links either = symmetrize(forward[k], reverse[k], source_words, target_words, Symmetrization::union_);
      for (Symmetrization method : {Symmetrization::grow_diag, Symmetrization::grow_diag_final,
                                    Symmetrization::grow_diag_final_and}) {
        const Links links = symmetrize(forward[k], reverse[k], source_words, target_words, method);
        if (!std::is_sorted(links.begin(), links.end()) || !includes(links, both) || !includes(either, links))
          std::abort();
      }
      if (!includes(forward[k], both) || !includes(either, forward[k])) std::abort();
    }
  } catch (const Error&) {
  }
  return 0;
}
