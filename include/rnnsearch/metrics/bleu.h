#pragma once
// Corpus BLEU (Papineni et al., 2002) as sacreBLEU 2.x computes it (docs/metrics.md), and
// multi-bleu.perl's on tokens, which is the same computation without smoothing.
//
// Each segment is tokenized (sacre_tokenizers.h). For n = 1..N (N = 4), over the corpus:
//   correct_n = Σ_segments Σ_ngrams min(count in hypothesis, max over references of its count)
//   total_n   = Σ_segments (hypothesis length − n + 1, when positive)
//   c = Σ hypothesis lengths, r = Σ reference lengths, each the one closest to its
//       hypothesis's length (the shorter on a tie)
//   BP = 1 if c >= r, exp(1 − r/c) if 0 < c < r, 0 if c = 0
//   p_n = correct_n / total_n, smoothed where correct_n = 0:
//     none   p_n = 0
//     floor  p_n = k / total_n (k = 0.1 unless given)
//     add-k  correct_n + k and total_n + k for n > 1, before anything else (k = 1 unless given)
//     exp    p_n = 1 / (2^z · total_n), z counting the orders so far with correct = 0
//            (mteval-v13a.pl's smoothing, sacreBLEU's default)
//   BLEU = 100 · BP · exp((1/E) Σ_{n<=E} log p_n), log 0 taken as −9999999999 (so BLEU 0), and
//   E = N, or with effective_order the last order with total_n > 0. The loop over n stops at
//   the first total_n = 0, whose p_n stays 0. No order with any correct n-gram: BLEU 0.
#include <optional>
#include <string>
#include <vector>

#include "rnnsearch/metrics/sacre_tokenizers.h"
#include "rnnsearch/metrics/signature.h"

namespace rnnsearch {

enum class BleuSmoothing { none, floor, add_k, exp };
// "none", "floor", "add-k", "exp" (throws rnnsearch::Error naming the choices).
BleuSmoothing parse_bleu_smoothing(const std::string& name);

struct BleuOptions {
  BleuTokenizer tokenizer = BleuTokenizer::mteval_13a;
  bool lowercase = false;  // multi30k lowercases whatever this says
  BleuSmoothing smoothing = BleuSmoothing::exp;
  std::optional<double> smooth_value;  // floor and add-k; their defaults 0.1 and 1 when unset
  int max_order = 4;
  bool effective_order = false;
};

// The sufficient statistics: summed over segments, then turned into the score.
struct BleuStats {
  long hyp_len = 0, ref_len = 0;
  std::vector<double> correct, total;  // per order; doubles because add-k adds k to them
  explicit BleuStats(int max_order = 4) : correct(max_order), total(max_order) {}
  BleuStats& operator+=(const BleuStats& other);
};

struct BleuResult {
  double bleu = 0;                     // x100
  std::vector<double> precisions;      // x100, smoothed, one per order
  std::vector<double> correct, total;  // as the formula used them (add-k included)
  double brevity_penalty = 0;
  long hyp_len = 0, ref_len = 0;
  double ratio() const { return ref_len ? double(hyp_len) / ref_len : 0.0; }
};

// One segment's statistics: its hypothesis tokens against the tokens of each reference.
BleuStats segment_bleu_stats(const std::vector<std::string>& hypothesis,
                             const std::vector<std::vector<std::string>>& references, int max_order = 4);

// The score of summed statistics (the formula above).
BleuResult compute_bleu(BleuStats stats, BleuSmoothing smoothing, std::optional<double> smooth_value = {},
                        bool effective_order = false);

// Lowercases (options.lowercase) and tokenizes hypotheses and references, then scores them.
// references[k][s] is the k-th reference of hypotheses[s]: one vector per reference file.
// Throws rnnsearch::Error when a reference vector's length differs from the hypotheses'.
BleuResult corpus_bleu(const std::vector<std::string>& hypotheses,
                       const std::vector<std::vector<std::string>>& references, const BleuOptions& options);

// multi-bleu.perl on tokenized segments, one reference each: BLEU-4 without smoothing, so 0
// as soon as one order has no match. Validation BLEU. Throws rnnsearch::Error when the two
// lists differ in length.
BleuResult multi_bleu(const std::vector<std::vector<std::string>>& hypotheses,
                      const std::vector<std::vector<std::string>>& references);

// "BLEU|nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:rnnsearch-0.1.0": sacreBLEU's
// fields (smooth:floor[0.10], smooth:add-k[1.00] with their value; case:lc for multi30k).
std::string bleu_signature(const BleuOptions& options, size_t references);

// sacreBLEU's text line: "SIGNATURE = 35.12 66.1/41.0/27.3/18.6 (BP = 1.000 ratio = 1.012
// hyp_len = 12345 ref_len = 12200)", the score with `width` decimals.
std::string format_bleu(const BleuResult& result, const std::string& signature, int width = 2);

}  // namespace rnnsearch
