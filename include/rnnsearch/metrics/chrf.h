#pragma once
// chrF (Popović, 2015) and chrF++ (Popović, 2017) as sacreBLEU 2.x computes them
// (docs/metrics.md). The default is chrF2: character n-grams of orders 1..6, β = 2.
//
// Per segment, after lowercasing (with lowercase):
//   character n-grams: of the text with all whitespace removed (kept with whitespace), in
//     code points; orders 1..C (C = char_order, 6).
//   word n-grams (chrF++, W = word_order > 0): orders 1..W of the words split on whitespace,
//     where a word of two or more characters that ends in ASCII punctuation
//     !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~ is split before it ("dog." -> "dog" "."), or else one
//     that starts with it after it ("(dog" -> "(" "dog"): one character at most.
//   For every order i, counts clipped as in BLEU: hyp_i = hypothesis n-grams (0 when the
//   reference has none of that order), ref_i = reference n-grams, match_i = Σ min(counts).
//   With several references, the statistics of the one with the best segment score are kept
//   (the first of equal ones).
// Over the corpus the statistics are summed, then with P_i = match_i/hyp_i, R_i = match_i/ref_i:
//   effective order (the default, eff:yes): P and R the means of P_i and R_i over the orders
//     with hyp_i > 0 and ref_i > 0, chrF = 100 (1+β²) P R / (β² P + R), 0 when P + R = 0.
//   eps_smoothing (chrF++.py's, NLTK's and Moses', eff:no): P_i or R_i is ε = 1e-16 when its
//     denominator is 0, F_i = (1+β²) P_i R_i / (β² P_i + R_i) (ε when the denominator is 0),
//     chrF = 100 · mean over all C + W orders of F_i.
#include <string>
#include <vector>

namespace rnnsearch {

struct ChrfOptions {
  int char_order = 6;
  int word_order = 0;  // 2: chrF++
  int beta = 2;
  bool lowercase = false;
  bool whitespace = false;  // keep whitespace in the character n-grams
  bool eps_smoothing = false;
};

struct ChrfResult {
  double score = 0;  // x100
  std::string name;  // "chrF2", "chrF2++" (one '+' per word order)
};

// references[k][s] is the k-th reference of hypotheses[s]: one vector per reference file.
// Throws rnnsearch::Error when a reference vector's length differs from the hypotheses'.
ChrfResult corpus_chrf(const std::vector<std::string>& hypotheses,
                       const std::vector<std::vector<std::string>>& references, const ChrfOptions& options = {});

// "chrF2|nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:rnnsearch-0.1.0"
std::string chrf_signature(const ChrfOptions& options, size_t references);

}  // namespace rnnsearch
