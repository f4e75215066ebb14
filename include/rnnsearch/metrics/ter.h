#pragma once
// Translation edit rate (Snover et al., 2006) as sacreBLEU 2.x computes it, which follows
// tercom (docs/metrics.md). Lower is better.
//
// Each segment is tokenized by tokenize_tercom (sacre_tokenizers.h; by default only
// lowercased) and split on whitespace; the references are tokenized twice, as sacreBLEU 2.x
// does (its reference cache tokenizes them, then its TER again). That only matters with
// normalized, whose possessive rule then also splits "'s" before punctuation: "Nima's," ->
// "nima's ," -> "nima 's ,". Against each reference:
//   edits = shifts + the word-level edit distance (insertion, deletion, substitution: 1
//   each) left after them, where shifts move a block of hypothesis words elsewhere, greedily:
//   while some shift lowers the edit distance, the best one is made, the best being the
//   largest decrease, then the longest block, then the earliest block, then the earliest
//   target position. A candidate block (at most 10 words) is a word sequence of the
//   hypothesis that also occurs in the reference at most 50 positions away, has an error in
//   both, and is not already aligned inside itself; it may be moved to just after the
//   hypothesis word aligned with any reference position from the one before the match to
//   the match's last (to the front for the position before the first). After 1000
//   candidates in a segment the search stops (and the shift found last is not made).
//   The edit distance only fills a band of the matrix around its diagonal, as tercom's
//   beam does: 25 cells on either side of row i's position i·|ref|/|hyp| (wider when the
//   lengths differ by more than 50 times), every cell of the last row.
//   An empty reference: edits = hypothesis length.
// Per segment the fewest edits over the references, and the mean reference length, are
// summed over the corpus: TER = 100 · edits / length (100 when the length is 0 and there
// are edits, 0 when neither).
#include <string>
#include <vector>

#include "rnnsearch/metrics/sacre_tokenizers.h"

namespace rnnsearch {

struct TerResult {
  double score = 0;       // x100
  long edits = 0;         // Σ of the fewest edits per segment
  double ref_length = 0;  // Σ of the mean reference lengths
};

// {edits, reference length} of one tokenized hypothesis against one tokenized reference.
std::pair<long, long> translation_edit_rate(const std::vector<std::string>& hypothesis,
                                            const std::vector<std::string>& reference);

// references[k][s] is the k-th reference of hypotheses[s]: one vector per reference file.
// Throws rnnsearch::Error when a reference vector's length differs from the hypotheses'.
TerResult corpus_ter(const std::vector<std::string>& hypotheses,
                     const std::vector<std::vector<std::string>>& references, const TercomOptions& options = {});

// "TER|nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:rnnsearch-0.1.0"
std::string ter_signature(const TercomOptions& options, size_t references);

}  // namespace rnnsearch
