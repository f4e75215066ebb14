#pragma once
// Lexical shortlist for decoding (Marian's --shortlist): the output layer of a batch is
// computed only for the target tokens its sentences plausibly need,
//
//   shortlist(batch) = {the `first` most frequent target tokens}
//                    ∪ {for each source token s of the batch, its `best` most probable
//                       translations t by p(t | s)}
//                    ∪ {the four specials <pad> <unk> <s> </s>}
//
// and the softmax normalises over those (V' of them instead of V). Vocabularies are in
// frequency order after the specials, so the most frequent tokens are ids 0 .. first−1. Every source ends in
// </s>, whose translations (function words, punctuation) therefore join every batch.
//
// p(t | s) is a lexical table learned by IBM Model 1 (EM over all source–target token pairs
// of each training sentence pair; the source </s> plays the part of the empty word) and
// stored in Marian's lex.s2t format, one entry per line: "target source p(t|s)". A table
// made by other tools (fast_align + extract_lex) loads the same way.
#include <string>
#include <vector>

#include "rnnsearch/text/corpus.h"
#include "rnnsearch/text/vocab.h"

namespace rnnsearch {

struct LexicalEntry {
  int target;
  float prob;  // p(target | source)
};
// table[s]: the translations of source id s, most probable first.
using LexicalTable = std::vector<std::vector<LexicalEntry>>;

// `iterations` rounds of EM from uniform p(t | s). Keeps each source token's `keep` most
// probable translations with p ≥ min_prob.
LexicalTable learn_lexical_table(const ParallelCorpus& corpus, int src_vocab, int tgt_vocab, int iterations,
                                 int keep, float min_prob);

// lex.s2t, written atomically.
void write_lexical_table(const std::string& path, const LexicalTable& table, const Vocab& src_vocab,
                         const Vocab& tgt_vocab);
// Entries whose tokens are not in the vocabularies are skipped (they can never be used).
// Throws rnnsearch::Error "FILE:LINE: problem" on a line that is not "target source
// probability" with a probability in [0, 1].
LexicalTable read_lexical_table(const std::string& path, const Vocab& src_vocab, const Vocab& tgt_vocab);

class Shortlist {
 public:
  // Throws rnnsearch::Error unless first ≥ 0 and best ≥ 0.
  Shortlist(LexicalTable table, int tgt_vocab, int first, int best);

  // The shortlist of a batch of sources (token ids), in increasing id order.
  std::vector<int> words(const std::vector<std::vector<int>>& sources) const;

 private:
  LexicalTable table_;
  int tgt_vocab_, first_, best_;
};

}  // namespace rnnsearch
