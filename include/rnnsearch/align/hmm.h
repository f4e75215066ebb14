#pragma once
// A word aligner that needs no neural model: IBM model 1, then the HMM alignment model
// (Vogel, Ney & Tillmann 1996) with the empty word as Och & Ney (2003) add it, trained by EM
// on the very pairs it aligns, as fast_align, eflomal and GIZA++ are (`rnnsearch align
// --hmm`, docs/aligning.md). It gives the bootstrap links of guided-alignment training
// (scripts/align.sh) and is a fast aligner of its own.
//
// One direction generates the target words t_1..t_J of a pair from its source words
// s_1..s_I: target word j comes from source word a_j, or from the empty word (a_j = ∅):
//
//   p(t, a | s) = Π_j p(a_j | a_{j-1}) · t(t_j | s_{a_j})          (t(t_j | ∅) when a_j = ∅)
//   p(a_j = i | a_{j-1} = i') = (1 - p0) · c(i - i') / Σ_{i''=1..I} c(i'' - i')
//   p(a_j = ∅ | a_{j-1} = i') = p0, and the next jump is taken from i' again
//
// a_0 = 0 (a jump into the sentence from before its first word); c(d) is a learnt weight of a
// jump of d words, one for each d in [-kMaxJump, kMaxJump] (longer jumps share the end ones);
// p0 is fixed (HmmOptions::null_probability).
//
// Training (per direction): IBM model 1 iterations (every a_j independent and uniform over
// the I source words and ∅) estimate the translation table t(f | e); then HMM iterations
// re-estimate t and c from the posteriors of forward-backward. The M step of t is variational
// Bayes with a symmetric Dirichlet prior α (as fast_align -v; Riley & Gildea 2012):
//
//   t(f | e) = exp ψ(n(f, e) + α) / exp ψ(Σ_f' n(f', e) + α · F_e)
//
// (n the expected counts, F_e the target words seen with e, ψ the digamma function); a small
// α keeps rare source words from soaking up the links of their neighbours. α = 0 is plain
// maximum likelihood.
//
// Reading: the posterior p(a_j = i | s, t) of every target word j and source word i, a
// (J + 1) × (I + 1) matrix laid out as the attention the Aligner reads (rows the target words
// and an empty last row, columns the source words and ∅ last), so links come off it with the
// same --method and --symmetrize (align/reading.h). Words are cut at white space, lowercased
// (Unicode) and cut to their first HmmOptions::stem characters before they are counted: a
// crude stemmer that lets "Kommission" and "Kommissionen" share their counts, which a corpus
// of a few ten thousand pairs needs (docs/aligning.md measures it).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rnnsearch/align/reading.h"
#include "rnnsearch/decode/hypothesis.h"

namespace rnnsearch::align {

struct HmmOptions {
  int ibm1_iterations = 5;
  int hmm_iterations = 5;
  double null_probability = 0.2;  // p0
  double prior = 0.1;             // α; 0 = maximum likelihood
  int stem = 6;                   // words counted by their first `stem` characters; 0 = whole
  // Pairs with a side longer than this many words are skipped (as align's --max-length with a
  // model): training time grows with the cube of the length.
  int max_length = 200;
  bool agreement = true;          // both directions trained together (train_hmm_aligners)
  int threads = 1;                // pairs processed at once (OpenMP)
};
// Every range of HmmOptions, worded as the command line spells the options (util/checks.h):
// the CLI checks before it reads its files, hmm_align before it trains (the Python module).
void check_hmm_options(const HmmOptions& options);

// Words as ids: source id 0 is ∅, real words from 1; target ids from 0.
struct WordIdCorpus {
  std::vector<std::vector<int>> source, target;
  int source_words = 1, target_words = 0;  // vocabulary sizes (the source's with ∅)
  // the counted form of each id (counted_words): source_forms[0] is ∅'s, ""
  std::vector<std::string> source_forms, target_forms;
};
// The white-space words of a line as they are counted: lowercased, cut to their first `stem`
// characters (Unicode code points) when stem > 0.
std::vector<std::string> counted_words(const std::string& line, int stem);
// The white-space words of each line, lowercased, cut to their first `stem` characters
// (Unicode code points) when stem > 0, numbered in order of appearance.
WordIdCorpus word_id_corpus(const std::vector<std::string>& source_lines, const std::vector<std::string>& target_lines,
                            int stem = 0);
// The same corpus the other way round (∅ moves to the new source side).
WordIdCorpus reversed(const WordIdCorpus& corpus);

class HmmAligner;
// EM training (options.ibm1_iterations of IBM model 1, then options.hmm_iterations of the
// HMM) of one direction, or of two on the same pairs (reverse's corpus the reversed one of
// forward's); with agreement, in the HMM iterations, the two directions' expected link counts
// are the product of their posteriors (after Liang, Taskar & Klein 2006), ∅'s each one's own.
// iteration(kind, k), when given, is told after each iteration ("ibm1" or "hmm", 1-based).
void train_hmm_aligners(HmmAligner& forward, HmmAligner* reverse, bool agreement,
                        const std::function<void(const char* kind, int iteration)>& iteration = nullptr);

class HmmAligner {
 public:
  static constexpr int kMaxJump = 16;
  // t(f | e) of a pair of words never seen together in training (aligning new pairs with
  // saved tables, align/hmm_tables.h): their links come from the jumps around them.
  static constexpr double kUnseen = 1e-9;

  // What training learns: the translation table as compressed rows (the target words seen
  // with source word e are target[row[e] .. row[e + 1]), sorted, with probabilities
  // prob[same]), the jump weights c(d) at d + kMaxJump, and whether the HMM has been trained
  // (false: posteriors are IBM model 1's).
  struct Table {
    std::vector<size_t> row;
    std::vector<int> target;
    std::vector<double> prob;
    std::vector<double> jump;
    bool hmm = false;
  };

  // Untrained (a uniform table) on corpus, kept by reference: it must outlive the aligner.
  HmmAligner(const WordIdCorpus& corpus, const HmmOptions& options);
  // A trained table (saved earlier), to align new pairs: it has no corpus to train on.
  HmmAligner(Table table, const HmmOptions& options);

  // The posterior matrix of pair k, (J + 1) × (I + 1) as above; 1 × 1 of zeros for an empty side.
  Alignment posteriors(size_t pair) const;
  // The same of any pair of word ids; ids beyond the table's (words never seen) are unseen
  // with every word.
  Alignment posteriors(const std::vector<int>& source, const std::vector<int>& target) const;

  // The translation probability t(f | e) (e = 0: ∅); 0 for a pair never seen together.
  double translation(int e, int f) const;
  // The learnt jump weights c(-kMaxJump..kMaxJump), normalized to sum to 1.
  std::vector<double> jumps() const;
  const Table& table() const { return table_; }

 private:
  friend void train_hmm_aligners(HmmAligner&, HmmAligner*, bool, const std::function<void(const char*, int)>&);
  struct Workspace;
  void forward_backward(const std::vector<int>& src, const std::vector<int>& tgt, Workspace& w) const;
  // w.posterior of the pair; with jump_counts (the HMM), its expected jumps added into them.
  void posterior(const std::vector<int>& src, const std::vector<int>& tgt, Workspace& w,
                 std::vector<double>* jump_counts) const;
  // w.posterior (after posterior(pair, w, ...)) added as expected counts of the table.
  void add_counts(size_t pair, const Workspace& w, std::vector<double>& counts) const;
  // The M step: the table from counts, the jump weights from jump_counts (the HMM only).
  void maximize(const std::vector<double>& counts, const std::vector<double>& jump_counts);
  void normalize_translations(const std::vector<double>& counts);
  int entry(int e, int f) const;         // the index of (e, f) in the table; -1 if absent
  double probability(int entry) const;   // t of an entry; kUnseen for -1

  const WordIdCorpus* corpus_ = nullptr;  // training's; null for a loaded table
  HmmOptions options_;
  Table table_;
};

}  // namespace rnnsearch::align
