#pragma once
// Corpus BLEU-4 on tokenized text exactly as multi-bleu.perl: n-gram matches clipped by the
// reference counts and summed over the corpus, geometric mean of the four precisions
// (0 when any is 0), brevity penalty exp(1 - r/c) when c < r.
#include <string>
#include <vector>

namespace rnnsearch {

struct BleuResult {
  double bleu = 0;               // x100
  double precisions[4] = {};     // x100
  double brevity_penalty = 0;
  long hyp_len = 0, ref_len = 0;
  double ratio() const { return ref_len ? double(hyp_len) / ref_len : 0.0; }
};

// Throws rnnsearch::Error when the two lists differ in length.
BleuResult corpus_bleu(const std::vector<std::vector<std::string>>& hypotheses,
                       const std::vector<std::vector<std::string>>& references);

// "BLEU = 35.12, 66.1/41.0/27.3/18.6 (BP=1.000, ratio=1.012, hyp_len=12345, ref_len=12200)"
std::string format_bleu(const BleuResult& result);

}  // namespace rnnsearch
