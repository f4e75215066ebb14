#pragma once
// How decoding ranks a hypothesis and how long it may grow: the beam search (beam_search.h)
// ranks its hypotheses by ranking_score, and `rnnsearch score` ranks given translations by it
// too (decode/scorer.h).
//
//     score = log p / lp + cp − word_penalty · length
//     lp = length^normalize, or ((5 + length) / 6)^α with a length-penalty α (GNMT, Wu et
//          al. 2016, eq. 14)                       length = tokens, + 1 for </s> when finished
//     cp = β Σ_j log min(Σ_i a_ij, 1)              the coverage penalty (ibid.), a_ij the
//          attention of output token i on source position j (</s> included); 0 when β = 0
//
//   The maximum output length is 2·S + 10 tokens (S = source tokens with </s>), or
//   ⌊F · S⌋ (at least 1) with a max-length factor F.
#include <vector>

namespace rnnsearch {

struct BeamOptions;

// The score above of a hypothesis with log-probability log_p and `length` tokens (+ 1 for
// </s> when finished); coverage is its Σ_j log min(Σ_i a_ij, 1) (coverage_term), read only
// when β > 0.
double ranking_score(const BeamOptions& options, double log_p, int length, double coverage);

// Σ_j log min(sums_j, 1), sums_j = the attention on source position j summed over a
// hypothesis' rows; a position no row attends to at all counts as log 1e-30 rather than −∞
// (a weight that underflowed).
double coverage_term(const std::vector<double>& sums);

// The reference's limit: 2·S + 10 output tokens, S = source length including </s>; with a
// max-length factor F > 0, ⌊F · S⌋ (at least 1).
int max_output_length(int source_length, double max_length_factor = 0);

}  // namespace rnnsearch
