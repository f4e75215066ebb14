#pragma once
// Beam search over the RNNsearch decoder (docs/design.md §1), for several sentences at once. Per
// sentence it is the PyTorch reference's beam():
//
//   Each live hypothesis h (log-probability σ_h so far) is one row of a decoder step; its
//   candidates (h, w) score σ_h + log p(w | h, x). A sentence keeps its best k − f of them
//   (k = beam size, f = hypotheses already finished): those ending in </s> are finished and
//   leave the beam, the others are the next beam, so the beam shrinks as hypotheses finish.
//   A sentence stops when its beam is empty, or after its maximum output length, when the
//   unfinished hypotheses join the finished ones. Hypotheses are ranked by their score, and
//   the maximum output length is 2·S + 10 tokens (S = source tokens with </s>) or as set
//   (ranking.h).
//
// Target prefix (per sentence, optional): while steps < prefix length, the one hypothesis
// is extended by the prefix's next token alone, whatever the model prefers (its log p
// counts, its attention row is kept); then the search goes on as above. The length limit
// is at least the prefix length + 1, so a prefix can always be followed by </s>. With
// subword pieces, the first token after the prefix begins a new word (set_word_pieces), so
// that the prefix's last word stays as typed.
//
// Beam size 1 is greedy decoding: the argmax at every step.
//
// Lexical constraints (per sentence, optional; decode/constraints.h): phrases every hypothesis
// must contain, by dynamic beam allocation (constrained_search.h). Phrases to avoid: a token
// that would complete one is never proposed (avoided_phrases.h).
//
// Sampling (BeamOptions::sampling_*, decode/sampling.h): instead of the best candidates, each
// of the sentence's max(n_best, 1) samples draws its next token from its own row, all from
// the one row after <s> (or the target prefix); a sample leaves at </s>.
//
// Alternatives (BeamOptions::alternatives = K, alternatives.h): the K most probable tokens after
// <s> (or the target prefix), each completed greedily.
//
// The strategies share this core (slots, rows, the hypotheses' tree, the results) and each has
// a file of its own: the beam's selection (top_candidates.cpp), the lanes of sampling
// (sampling.cpp) and of alternatives (alternatives.cpp), constrained search
// (constrained_search.cpp) and phrases to avoid (avoided_phrases.cpp).
//
// Ensembles: with several models (same vocabularies, any sizes), every step runs each
// model's decoder step on the same hypotheses and uses the mean of their log-probabilities,
// log p(w | h) = (1/M) Σ_m log p_m(w | h); the attention returned is the mean attention.
//
// Shortlist: given the target words a batch may produce (decode/shortlist.h), every step
// computes and normalises log p over those words only; candidates are those words.
//
// Batching: the live hypotheses of all sentences of a batch are the rows of one
// decoder_step, each attending to its own sentence; the encoder (annotations, keys, s_0)
// runs once per batch. <pad> and <s> are never proposed: they are never training targets.
//
// Continuous batching (what a server needs; search() is made of the same calls): start()
// begins an empty search, add() encodes sentences and lets them join at the next step,
// step() takes one decoder step for every sentence in the search and returns those that
// finished. A sentence's hypotheses do not depend on what else shares its steps: each row
// attends to its own sentence's annotations, kept in a slot of the search's attention memory
// (slot b holds rows b·stride .. b·stride + length − 1; a finished sentence's slot is reused).
#include <algorithm>
#include <vector>

#include "rnnsearch/decode/avoided_phrases.h"
#include "rnnsearch/decode/constrained_search.h"
#include "rnnsearch/decode/constraints.h"
#include "rnnsearch/decode/hypothesis.h"
#include "rnnsearch/decode/ranking.h"
#include "rnnsearch/decode/sampling.h"
#include "rnnsearch/decode/top_candidates.h"
#include "rnnsearch/model/decoder_step.h"

namespace rnnsearch {

// The search's options, with their defaults: the defaults of every shell. The options users
// give (all but alignment and max_output_length) are declared, bounded and checked in one
// table, decode/decode_options.h.
struct BeamOptions {
  int beam_size = 5;          // k; 1 = greedy
  int n_best = 0;             // hypotheses returned per sentence (0 = 1, the 1-best alone), ≤ beam_size
  double normalize = 1.0;     // length normalisation exponent; 0 ranks by log-probability
  bool alignment = false;     // return each hypothesis' attention matrix
  // With a model that has an alignment output (model/alignment_output.h), alignments come from
  // it (Translator, Scorer) unless this is 1: then they are the decoder's attention.
  int raw_attention = 0;
  int max_output_length = 0;  // tokens including </s>; 0 = max_output_length(source length)
  // Decoding controls (above; all off by default):
  double max_length_factor = 0;      // F > 0: at most ⌊F · source length⌋ tokens (when max_output_length is 0)
  double word_penalty = 0;           // subtracted from the score per output token (Marian's --word-penalty)
  double length_penalty_alpha = -1;  // α ≥ 0: GNMT's lp instead of length^normalize; < 0: off
  double coverage_penalty = 0;       // β ≥ 0
  // Sampling instead of search (decode/sampling.h), with CTranslate2's sampling_topk and
  // sampling_topp values: off by default (K = 1); with K = 0 or K > 1 each sentence gets
  // max(n_best, 1) samples (beam_size is not read).
  int sampling_topk = 1;             // K: 1 = no sampling; 0 = draw among all tokens; else the K most probable
  double sampling_topp = 1;          // P in (0, 1]: when sampling, among the nucleus of mass P (1: no filter)
  double sampling_temperature = 1;   // T > 0: log p / T
  int sampling_seed = 1;             // with the sentence's key, the draws' seed
  bool samples() const { return sampling_topk != 1; }
  // Alternatives instead of search, off by default: with K > 0 each sentence gets the K most
  // probable tokens after its target prefix, each completed greedily (beam_size is not read).
  int alternatives = 0;
  // 1: a sentence's output is bitwise the same whatever it is batched with (model/products.h:
  // the Translator's and the Scorer's products then go through kernels/invariant_gemm.h);
  // 0: the BLAS products, faster and batch-dependent in the last bits.
  int batch_invariant = 1;
};

// What steers one source's hypotheses (each part optional): a target prefix and lexical
// constraints (target ids without </s>, <s> or <pad>).
struct SentenceSteering {
  std::vector<int> prefix;
  PhraseConstraints constraints;
};

template <class T>
class BeamSearch {
 public:
  explicit BeamSearch(const Parameters<T>& params) : BeamSearch(std::vector<const Parameters<T>*>{&params}) {}
  // An ensemble; the models must share their vocabularies. low_precision: each model's
  // vocabulary projection in bf16 or int8 (--precision; used without a shortlist), or empty
  // for fp32.
  explicit BeamSearch(const std::vector<const Parameters<T>*>& models,
                      const std::vector<LowPrecisionProjection>& low_precision = {});

  using Steering = SentenceSteering;
  using Steerings = std::vector<SentenceSteering>;
  // sources: token ids, each ending in </s>. Returns for each source its best
  // min(max(n_best, 1), found) hypotheses, best first (ties: the one found first). shortlist: the
  // target ids the output layer is restricted to, increasing (nullptr: all of them); it must
  // hold the steering's tokens. steering: nullptr, or one per source.
  // keys: nullptr, or one number per source that, with the seed, makes its samples
  // (sampling_uniform; the input line, so that they do not depend on the batch); else its id.
  std::vector<std::vector<Hypothesis>> search(const std::vector<std::vector<int>>& sources,
                                              const BeamOptions& options,
                                              const std::vector<int>* shortlist = nullptr,
                                              const Steerings* steering = nullptr,
                                              const std::vector<uint64_t>* keys = nullptr);

  // Subword models: joins[w] = how target token w joins the word before it (text/subwords.h
  // WordJoin; nonzero: a piece without "▁"), pieces[w] its text. Such tokens are not proposed
  // right after a target prefix, a letter or digit after a constraint's phrase undoes it
  // (constraints.h), and phrases to avoid are avoided as text, however pieced. Empty (the
  // default): every token may follow a prefix, and phrases are whole as tokens.
  void set_word_pieces(std::vector<char> joins, std::vector<std::string> pieces) {
    word_join_ = std::move(joins);
    piece_text_ = std::move(pieces);
  }

  // Continuous batching. start: an empty search with these options (and shortlist, which
  // must outlive it); any sentence still in the search is dropped. add: the sources (with
  // their steering, as search() takes them) join the search at its next step; returns
  // the id of the first (the others follow; ids count from 0 after start). step: one decoder
  // step; returns the sentences that finished.
  // remove: the sentences of these ids leave the search before the next step, without a
  // result (their slots are free again; the others go on as they would have); returns how
  // many were in it.
  struct Finished {
    size_t id;
    std::vector<Hypothesis> hypotheses;  // as search() returns them
  };
  void start(const BeamOptions& options, const std::vector<int>* shortlist = nullptr);
  size_t add(const std::vector<std::vector<int>>& sources, const Steerings* steering = nullptr,
             const std::vector<uint64_t>* keys = nullptr);
  std::vector<Finished> step();
  size_t remove(const std::vector<size_t>& ids);
  size_t sentences() const { return order_.size(); }  // in the search, not yet finished

 private:
  struct Live {
    int node;
    T log_prob;
    int parent_row;  // the decoder row whose state this hypothesis continues
    int lane;        // sampling and alternatives: which of the sentence's samples or
                     // alternatives (-1 before they part)
    ConstraintState constraint;  // with lexical constraints
  };
  struct Final {
    int node;
    double log_prob, score;
    bool finished;
    int lane;        // Live::lane
    uint64_t met;    // the constraints' phrases it holds (ConstraintState::complete)
    bool satisfied;  // holds every phrase of the constraints
  };
  struct Sentence {
    size_t id = 0;
    uint64_t key = 0;  // sampling: what sets its draws apart (add's keys)
    int source_length = 0, max_steps = 0, steps = 0;
    bool closing = false;     // one more step, only for the attention row of cut hypotheses
    std::vector<int> prefix;  // target tokens forced first
    PhraseConstraints constraints;
    AvoidedPhrases avoid;  // constraints.avoid
    std::vector<T> alternative_log_probs;  // alternatives: log p of each lane's first token
    std::vector<TokenNode> nodes;
    std::vector<float> attention;  // one row of source_length weights per node (if collected)
    std::vector<Live> live, next;
    std::vector<Final> finals;
  };
  using Candidate = BeamCandidate<T>;  // its lane: Live::lane

  void encode(const std::vector<std::vector<int>>& sources);
  void reserve_memory(Index slots, Index stride);
  void extend(int sentence, int first_row);
  void close(Sentence& sentence, int first_row);
  // The candidates of a step, in heap_: the beam's best (top_candidates.h), a target prefix's
  // token, and those of the strategies in files of their own (named beside them).
  void select_candidates(const Sentence& sentence, int first_row, size_t count, bool word_start);
  void force_candidate(const Sentence& sentence, int first_row, int word);
  void lane_candidates(const Sentence& sentence, int first_row, bool word_start);       // sampling.cpp
  void alternative_candidates(Sentence& sentence, int first_row, bool word_start);      // alternatives.cpp
  void constrained_candidates(const Sentence& sentence, int first_row, size_t count,    // constrained_search.cpp
                              bool word_start);
  void block_tokens(const Sentence& sentence, int first_row);
  void block_incomplete(const Sentence& sentence, int first_row);  // constrained_search.cpp
  int add_node(Sentence& sentence, int parent, int token, int row);
  void finish(Sentence& sentence, int node, T log_prob, int length, bool finished, int lane,
              const ConstraintState& constraint);
  // Hypotheses returned per sentence: K alternatives, else max(n_best, 1).
  int outputs() const { return options_.alternatives > 0 ? options_.alternatives : std::max(options_.n_best, 1); }
  double coverage(const Sentence& sentence, int node) const;  // Σ_j log min(Σ_i a_ij, 1)
  bool collect_attention() const { return options_.alignment || options_.coverage_penalty > 0; }
  void queue_rows(int sentence);
  Index gather_states();
  std::vector<Hypothesis> best_hypotheses(const Sentence& sentence) const;

  // One model of the ensemble and its state.
  struct Member {
    const Parameters<T>* params;
    EncoderWorkspace<T> encoder;   // of the sentences being added
    Mat<T> annotations, keys;      // the attention memory: slots × stride rows, 2n and n wide
    DecoderStepWorkspace<T> step;
    OutputShortlist<T> shortlist;  // this model's output weights of the batch's shortlist
    Mat<T> s_prev;  // R×state_width() decoder states the next step continues
  };
  void run_models(Index rows);

  std::vector<Member> members_;
  BeamOptions options_;
  const std::vector<int>* shortlist_ = nullptr;  // column k of log_probs_ is word (*shortlist_)[k]
  const Mat<T>* log_probs_ = nullptr;  // the last step's (mean) log-probabilities, R×V (or V')
  const Mat<T>* alpha_ = nullptr;      // and (mean) attention, R×S
  Mat<T> mean_log_probs_, mean_alpha_;
  std::vector<int> src_, lengths_;        // the padded time-major batch being added
  std::vector<Sentence> sentences_;       // by slot; sentences_[b].live empty: slot b is free
  std::vector<int> slot_lengths_;         // source length of each slot's sentence
  Index stride_ = 0;                      // rows per slot in the attention memory
  std::vector<int> order_;                // the slots in the search, in the order of their rows
  size_t next_id_ = 0;
  std::vector<int> row_sentence_, y_prev_, parent_rows_;  // per row of the next step
  std::vector<Candidate> heap_;
  std::vector<T> bases_;     // select_candidates' workspace
  BlockedTokens blocked_;    // what this step must not propose
  std::vector<Candidate> pool_;              // constrained_candidates' workspaces
  std::vector<int> banks_, advancing_;
  BankAllocation allocation_;
  TokenSampler sampler_;
  std::vector<char> word_join_;           // by target id (set_word_pieces)
  std::vector<std::string> piece_text_;  // by target id (set_word_pieces)
  mutable std::vector<double> coverage_sums_;  // coverage()'s workspace
};

}  // namespace rnnsearch
