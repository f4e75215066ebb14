#pragma once
// Word alignments as links between word positions (docs/aligning.md):
//
//   Pharaoh text   "0-0 1-2 2-1": SOURCE-TARGET pairs, 0-based, as fast_align, eflomal and
//                  `rnnsearch align` write them
//   gold text      "1-1 2p3": i-j a sure link, ipj a possible one, 1-based as the RWTH and
//                  Hansards gold sets write them (or 0-based)
//   symmetrize     the links of two directions combined (Koehn et al. 2003): intersect,
//                  union, grow-diag, grow-diag-final, grow-diag-final-and, exactly as
//                  fast_align's atools computes them
//
// Plain data and pure functions; errors are rnnsearch::Error with the file and line given.
#include <string>
#include <string_view>
#include <vector>

#include "rnnsearch/text/pharaoh.h"

namespace rnnsearch::align {

// A (source, target) link of 0-based word positions; Pharaoh text is read and written by
// text/pharaoh.h, the one reader and writer (white_space_tokens, pharaoh_text are its).
using Link = WordLink;
using rnnsearch::pharaoh_text;
using rnnsearch::white_space_tokens;

// One sentence pair's links, sorted by source then target position, each once (what every
// function here returns; sorted_links makes any list so).
using Links = std::vector<Link>;
Links sorted_links(Links links);

// A gold alignment: sure links S and possible links P, with S ⊆ P (a sure link is also
// possible, as Och & Ney define them; parse_gold puts every sure link into `possible`).
struct GoldLinks {
  Links sure, possible;
};

// One line of Pharaoh links (text/pharaoh.h's parse_pharaoh_line), sorted, each once. `file`
// and `line` (1-based) place the error: "FILE:LINE: bad link 'x' (expected ...)".
Links parse_pharaoh(std::string_view text, const std::string& file, size_t line);
// One line of a gold file: "i-j" sure, "ipj" possible, 1-based unless zero_based.
GoldLinks parse_gold(std::string_view text, bool zero_based, const std::string& file, size_t line);
enum class Symmetrization { intersect, union_, grow_diag, grow_diag_final, grow_diag_final_and };
// "intersect", "union", "grow-diag", "grow-diag-final" or "grow-diag-final-and" (throws
// rnnsearch::Error naming the choices).
Symmetrization parse_symmetrization(const std::string& name);
const char* symmetrization_name(Symmetrization method);

// The links of two directions of one sentence pair, both given as source-target links (the
// reverse direction's links transposed), combined as atools -c METHOD -i forward -j reverse:
//   intersect / union  of the two sets;
//   grow-diag          from the intersection, repeatedly add a union link that neighbours
//                      (8 neighbours) a link already in, where its source or its target word
//                      is still unaligned; passes in (source, target) order until one adds
//                      nothing;
//   -final             then each forward link, then each reverse link, whose source or target
//                      word is still unaligned;
//   -final-and         the same where both words are still unaligned.
// Throws rnnsearch::Error for a link outside source_words × target_words.
Links symmetrize(const Links& forward, const Links& reverse, int source_words, int target_words,
                 Symmetrization method);

}  // namespace rnnsearch::align
