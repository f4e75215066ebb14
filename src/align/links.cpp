#include "rnnsearch/align/links.h"

#include <algorithm>
#include <set>

#include "rnnsearch/error.h"

namespace rnnsearch::align {

Links sorted_links(Links links) {
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  return links;
}

Links parse_pharaoh(std::string_view text, const std::string& file, size_t line) {
  try {
    return sorted_links(parse_pharaoh_line(text));
  } catch (const Error& e) {
    throw Error(located(file, line, e.what()));
  }
}

GoldLinks parse_gold(std::string_view text, bool zero_based, const std::string& file, size_t line) {
  GoldLinks gold;
  const int first = zero_based ? 0 : 1;
  for (std::string_view token : white_space_tokens(text)) {
    Link link;
    char separator = 0;
    if (!parse_word_link(token, "-p", link, &separator))
      throw Error(located(file, line, "bad link '" + std::string(token) + "' (expected i-j for a sure link or ipj for a "
                                          "possible one, " + (zero_based ? "0-based)" : "1-based)")));
    if (link.source < first || link.target < first)
      throw Error(located(file, line, "link '" + std::string(token) +
                                          "' has position 0 in a 1-based gold file (0-based: --gold-zero-based)"));
    link.source -= first;
    link.target -= first;
    if (separator == '-') gold.sure.push_back(link);
    gold.possible.push_back(link);
  }
  gold.sure = sorted_links(std::move(gold.sure));
  gold.possible = sorted_links(std::move(gold.possible));
  return gold;
}

Symmetrization parse_symmetrization(const std::string& name) {
  for (Symmetrization method : {Symmetrization::intersect, Symmetrization::union_, Symmetrization::grow_diag,
                                Symmetrization::grow_diag_final, Symmetrization::grow_diag_final_and})
    if (name == symmetrization_name(method)) return method;
  throw Error("--symmetrize must be intersect, union, grow-diag, grow-diag-final or grow-diag-final-and, not '" +
              name + "'");
}

const char* symmetrization_name(Symmetrization method) {
  switch (method) {
    case Symmetrization::intersect: return "intersect";
    case Symmetrization::union_: return "union";
    case Symmetrization::grow_diag: return "grow-diag";
    case Symmetrization::grow_diag_final: return "grow-diag-final";
    case Symmetrization::grow_diag_final_and: return "grow-diag-final-and";
  }
  return "?";
}

namespace {

// The alignment grown by grow-diag and the final steps: atools' RefineCommand, on a
// source_words × target_words grid.
class Grid {
 public:
  Grid(int source_words, int target_words)
      : sources_(source_words), targets_(target_words), cells_(static_cast<size_t>(source_words) * target_words),
        source_aligned_(static_cast<size_t>(source_words)), target_aligned_(static_cast<size_t>(target_words)) {}

  bool has(int s, int t) const {
    return s >= 0 && t >= 0 && s < sources_ && t < targets_ && cells_[static_cast<size_t>(s) * targets_ + t];
  }
  void add(const Link& l) {
    cells_[static_cast<size_t>(l.source) * targets_ + l.target] = true;
    source_aligned_[l.source] = true;
    target_aligned_[l.target] = true;
  }
  bool has(const Link& l) const { return has(l.source, l.target); }
  // Source or target word still unaligned (atools' IsOneOrBothUnaligned).
  bool either_unaligned(const Link& l) const { return !(source_aligned_[l.source] && target_aligned_[l.target]); }
  // Both unaligned (IsNeitherAligned).
  bool neither_aligned(const Link& l) const { return !source_aligned_[l.source] && !target_aligned_[l.target]; }
  // One of the 8 neighbours is in, and a word of l is unaligned (KoehnAligned with diagonals).
  bool grows_diagonally(const Link& l) const {
    if (!either_unaligned(l)) return false;
    for (int ds = -1; ds <= 1; ++ds)
      for (int dt = -1; dt <= 1; ++dt)
        if ((ds || dt) && has(l.source + ds, l.target + dt)) return true;
    return false;
  }
  Links links() const {
    Links links;
    for (int s = 0; s < sources_; ++s)
      for (int t = 0; t < targets_; ++t)
        if (has(s, t)) links.push_back({s, t});
    return links;
  }

 private:
  int sources_, targets_;
  std::vector<bool> cells_, source_aligned_, target_aligned_;
};

void check_inside(const Links& links, int source_words, int target_words) {
  for (const Link& l : links)
    if (l.source < 0 || l.target < 0 || l.source >= source_words || l.target >= target_words)
      throw Error("link " + std::to_string(l.source) + "-" + std::to_string(l.target) + " is outside a pair of " +
                  std::to_string(source_words) + " source and " + std::to_string(target_words) + " target words");
}

}  // namespace

Links symmetrize(const Links& forward_links, const Links& reverse_links, int source_words, int target_words,
                 Symmetrization method) {
  check_inside(forward_links, source_words, target_words);
  check_inside(reverse_links, source_words, target_words);
  const Links forward = sorted_links(forward_links), reverse = sorted_links(reverse_links);
  Links both, either;
  std::set_intersection(forward.begin(), forward.end(), reverse.begin(), reverse.end(), std::back_inserter(both));
  std::set_union(forward.begin(), forward.end(), reverse.begin(), reverse.end(), std::back_inserter(either));
  if (method == Symmetrization::intersect) return both;
  if (method == Symmetrization::union_) return either;

  Grid grid(source_words, target_words);
  for (const Link& l : both) grid.add(l);
  // grow-diag: passes over the union links not yet in, in (source, target) order, each link
  // added at once (later ones in the same pass see it), until a pass adds none.
  Links candidates;
  std::set_difference(either.begin(), either.end(), both.begin(), both.end(), std::back_inserter(candidates));
  for (bool grew = true; grew;) {
    grew = false;
    Links left;
    for (const Link& l : candidates) {
      if (grid.grows_diagonally(l)) {
        grid.add(l);
        grew = true;
      } else {
        left.push_back(l);
      }
    }
    candidates.swap(left);
  }
  if (method != Symmetrization::grow_diag) {
    const bool and_ = method == Symmetrization::grow_diag_final_and;
    for (const Links* direction : {&forward, &reverse})
      for (const Link& l : *direction)
        if (!grid.has(l) && (and_ ? grid.neither_aligned(l) : grid.either_unaligned(l))) grid.add(l);
  }
  return grid.links();
}

}  // namespace rnnsearch::align
