// Beam search against brute force on a tiny random model: with a target vocabulary of six
// (<pad> <unk> <s> </s> and two words) and a short length limit every output sequence can
// be enumerated and scored by teacher forcing, so "the best by the normalised score" is
// known exactly. The oracles below step the decoder themselves (decoder_step, one row),
// independently of the beam search's bookkeeping.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include <omp.h>

#include "rnnsearch/decode/beam_search.h"
#include "rnnsearch/decode/parallel_batches.h"
#include "rnnsearch/error.h"
#include "rnnsearch/model/rnnsearch.h"
#include "rnnsearch/text/subwords.h"
#include "rnnsearch/text/vocab.h"
#include "support/fixtures.h"

namespace rnnsearch {
namespace {

// One BeamSearch::Steering per target prefix, without constraints.
template <class T>
typename BeamSearch<T>::Steerings prefixes_of(const std::vector<std::vector<int>>& prefixes) {
  typename BeamSearch<T>::Steerings steering;
  for (const std::vector<int>& prefix : prefixes) steering.push_back({prefix, {}});
  return steering;
}

constexpr int kEos = Vocab::kEos;
// The tokens a hypothesis may contain: <pad> and <s> are never proposed.
const std::vector<int> kWords = {Vocab::kUnk, 4, 5};

// Large weights make the output distributions peaked, so scores are far apart.
template <class T>
Parameters<T> tiny_model(OutputKind output, uint64_t seed, bool layer_norm = false, int enc_cell_depth = 1,
                         int dec_cell_base_depth = 1, int enc_depth = 1, int dec_depth = 1) {
  ModelConfig config = test::tiny_config(/*src_vocab=*/7, /*tgt_vocab=*/6, output);
  config.layer_norm = layer_norm;
  config.enc_cell_depth = enc_cell_depth;
  config.dec_cell_base_depth = dec_cell_base_depth;
  config.enc_depth = enc_depth;
  config.dec_depth = dec_depth;
  config.dec_cell_high_depth = dec_depth > 1 ? 2 : 1;
  config.skip = enc_depth > 1 || dec_depth > 1;
  Parameters<T> params(config);
  test::init_for_check(params, 1.0, seed);  // (with layer normalization, gains and biases other than 1 and 0)
  return params;
}

const std::vector<std::vector<int>> kSources = {{4, 5, 3}, {6, 3}, {5, 4, 6, 4, 3}, {3}, {6, 6, 5, 3}};

// One sequence decoded with teacher forcing: its log-probability and the attention of every
// step (plus, for an unfinished sequence, of the step after its last token).
struct Forced {
  double log_prob = 0;
  std::vector<std::vector<double>> attention;
};

template <class T>
class SingleRowDecoder {
 public:
  SingleRowDecoder(const Parameters<T>& params, const std::vector<int>& source) : params_(params) {
    const int length = static_cast<int>(source.size());
    encoder_forward<T>(params, source.data(), &length, 1, length, 0.0, 0.0, 0.0, 0, encoder_);
    reset();
  }
  void reset() {
    s_.resize(1, params_.config().state_width());
    decoder_start_states<T>(params_.config(), encoder_.s0.topRows(1), s_);
    y_ = Vocab::kBos;
  }
  // Runs the step that predicts the next token after y_.
  void step() {
    const int row = 0;
    decoder_step<T>(params_, attention_memory(encoder_), &row, s_, &y_, ws_);
  }
  void feed(int token) {
    s_ = ws_.states.topRows(1);
    y_ = token;
  }
  double log_p(int token) const { return static_cast<double>(ws_.log_probs(0, token)); }
  std::vector<double> alpha() const {
    std::vector<double> a;
    for (Index j = 0; j < encoder_.max_len; ++j) a.push_back(static_cast<double>(ws_.alpha(0, j)));
    return a;
  }
  const DecoderStepWorkspace<T>& workspace() const { return ws_; }

 private:
  const Parameters<T>& params_;
  EncoderWorkspace<T> encoder_;
  DecoderStepWorkspace<T> ws_;
  Mat<T> s_;
  int y_ = Vocab::kBos;
};

template <class T>
Forced forced_decode(SingleRowDecoder<T>& decoder, const std::vector<int>& tokens, bool finished) {
  Forced f;
  decoder.reset();
  std::vector<int> outputs = tokens;
  if (finished) outputs.push_back(kEos);
  for (int w : outputs) {
    decoder.step();
    f.log_prob += decoder.log_p(w);
    f.attention.push_back(decoder.alpha());
    decoder.feed(w);
  }
  if (!finished) {
    decoder.step();
    f.attention.push_back(decoder.alpha());
  }
  return f;
}

struct Candidate {
  std::vector<int> tokens;
  bool finished;
  double score;
};

double normalized(double log_prob, size_t length, double normalize) {
  return log_prob / std::pow(static_cast<double>(length), normalize);
}

// Every output of at most max_length tokens (</s> included) that ends in </s>, and every
// sequence of exactly max_length tokens without it (what the beam keeps at the limit).
// Sorted best first.
template <class T>
std::vector<Candidate> enumerate_all(SingleRowDecoder<T>& decoder, int max_length, double normalize) {
  std::vector<Candidate> all;
  std::vector<std::vector<int>> prefixes = {{}};
  for (int length = 0; length <= max_length; ++length) {
    std::vector<std::vector<int>> longer;
    for (const auto& prefix : prefixes) {
      if (length < max_length) {
        all.push_back({prefix, true, normalized(forced_decode(decoder, prefix, true).log_prob, length + 1, normalize)});
        for (int w : kWords) {
          longer.push_back(prefix);
          longer.back().push_back(w);
        }
      } else {
        all.push_back({prefix, false, normalized(forced_decode(decoder, prefix, false).log_prob, length, normalize)});
      }
    }
    prefixes = std::move(longer);
  }
  std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
  return all;
}

// The oracle itself is right: its log-probability is the teacher-forced training cost (the
// decoder step of inference and the training forward agree, with layer normalization, deep
// transition and the conditional decoder too).
TEST(BeamSearchOracle, ForcedDecodingMatchesTrainingForward) {
  struct Model {
    bool layer_norm;
    int depth, dec_depth;
    OutputKind output = OutputKind::maxout;
    int layers = 1;  // (with --skip when more than 1)
    int dec_layers = 1;  // (with --skip and two high transitions when more than 1)
  };
  for (const Model& m : {Model{false, 1, 1}, {true, 1, 1}, {false, 3, 1}, {true, 2, 1}, {false, 1, 2},
                         {true, 2, 3}, {false, 1, 2, OutputKind::linear}, {true, 2, 2, OutputKind::maxout, 3},
                         {false, 1, 2, OutputKind::maxout, 1, 2}, {true, 2, 2, OutputKind::linear, 2, 3}}) {
    const bool layer_norm = m.layer_norm;
    const int depth = m.depth;
    const auto params = tiny_model<double>(m.output, 3, layer_norm, depth, m.dec_depth, m.layers, m.dec_layers);
    const std::vector<int> source = {4, 5, 6, 3}, target = {5, 1, 4, 3};
    SingleRowDecoder<double> decoder(params, source);
    const Forced f = forced_decode(decoder, {5, 1, 4}, true);
    ModelWorkspace<double> ws;
    const double cost = rnnsearch_forward<double>(params, pad_batch({source}, {target}, {0}), Regularization{}, ws);
    EXPECT_NEAR(f.log_prob, -cost, 1e-12) << "layer normalization " << layer_norm << ", encoder cell depth " << depth
                                          << ", decoder base depth " << m.dec_depth << ", encoder layers " << m.layers
                                          << ", decoder layers " << m.dec_layers;
  }
}

struct ExhaustiveCase {
  OutputKind output;
  double normalize;
  int max_length;
  bool layer_norm = false;
  int enc_cell_depth = 1;
  int dec_cell_base_depth = 1;
  int enc_depth = 1;
  int dec_depth = 1;
};

class ExhaustiveBeam : public ::testing::TestWithParam<ExhaustiveCase> {};

// A beam as wide as the number of candidates prunes nothing: the n best it returns are the
// n best of the enumeration, with the same scores.
TEST_P(ExhaustiveBeam, ReturnsTheBestOfAllSequences) {
  const ExhaustiveCase c = GetParam();
  const auto params =
      tiny_model<double>(c.output, 11, c.layer_norm, c.enc_cell_depth, c.dec_cell_base_depth, c.enc_depth, c.dec_depth);
  BeamSearch<double> search(params);
  int finished_best = 0;
  for (const auto& source : kSources) {
    SingleRowDecoder<double> decoder(params, source);
    const std::vector<Candidate> all = enumerate_all(decoder, c.max_length, c.normalize);
    BeamOptions options;
    options.beam_size = static_cast<int>(all.size());
    options.n_best = 8;
    options.normalize = c.normalize;
    options.max_output_length = c.max_length;
    const auto found = search.search({source}, options).at(0);
    ASSERT_EQ(found.size(), 8u);
    for (size_t k = 0; k < found.size(); ++k) {
      EXPECT_EQ(found[k].tokens, all[k].tokens) << "rank " << k;
      EXPECT_EQ(found[k].finished, all[k].finished) << "rank " << k;
      EXPECT_NEAR(found[k].score, all[k].score, 1e-12) << "rank " << k;
    }
    finished_best += all[0].finished;
  }
  // The cases exercise what they should: a best that ends in </s> at least once.
  EXPECT_GT(finished_best, 0);
}

INSTANTIATE_TEST_SUITE_P(Cases, ExhaustiveBeam,
                         ::testing::Values(ExhaustiveCase{OutputKind::maxout, 1.0, 4},
                                           ExhaustiveCase{OutputKind::maxout, 0.0, 4},
                                           ExhaustiveCase{OutputKind::linear, 0.6, 4},
                                           ExhaustiveCase{OutputKind::linear, 1.0, 3},
                                           ExhaustiveCase{OutputKind::maxout, 1.0, 4, true},
                                           ExhaustiveCase{OutputKind::maxout, 0.0, 4, true, 3},
                                           ExhaustiveCase{OutputKind::maxout, 1.0, 4, false, 1, 2},
                                           ExhaustiveCase{OutputKind::linear, 0.6, 4, true, 2, 3},
                                           ExhaustiveCase{OutputKind::maxout, 1.0, 4, true, 1, 2, 2},
                                           ExhaustiveCase{OutputKind::maxout, 1.0, 4, false, 1, 2, 1, 2},
                                           ExhaustiveCase{OutputKind::linear, 0.6, 4, true, 2, 2, 2, 3}));

// The PyTorch reference's beam() (model.py) for one sentence, written as plainly as there:
// every hypothesis' log-probabilities recomputed from scratch by teacher forcing its prefix.
std::vector<Candidate> reference_beam(SingleRowDecoder<double>& decoder, size_t k, int max_length,
                                      double normalize) {
  struct Hyp {
    std::vector<int> tokens;
    double log_prob;
  };
  struct Option {
    double log_prob;
    size_t hyp;
    int word;
  };
  std::vector<int> proposable = kWords;
  proposable.push_back(kEos);
  std::sort(proposable.begin(), proposable.end());  // ties go to the lower word, as in BeamSearch
  std::vector<Hyp> hyps = {{{}, 0.0}};
  std::vector<Candidate> finished;
  auto by_score = [](const Candidate& a, const Candidate& b) { return a.score > b.score; };
  for (int t = 0; t < max_length; ++t) {
    std::vector<Option> options;
    for (size_t h = 0; h < hyps.size(); ++h) {
      decoder.reset();
      for (int w : hyps[h].tokens) {
        decoder.step();
        decoder.feed(w);
      }
      decoder.step();
      for (int w : proposable) options.push_back({hyps[h].log_prob + decoder.log_p(w), h, w});
    }
    std::stable_sort(options.begin(), options.end(),
                     [](const Option& a, const Option& b) { return a.log_prob > b.log_prob; });
    options.resize(std::min(options.size(), k - finished.size()));  // the beam shrinks
    std::vector<Hyp> next;
    for (const Option& o : options) {
      const std::vector<int>& prefix = hyps[o.hyp].tokens;
      if (o.word == kEos) {
        finished.push_back({prefix, true, normalized(o.log_prob, prefix.size() + 1, normalize)});
      } else {
        next.push_back({prefix, o.log_prob});
        next.back().tokens.push_back(o.word);
      }
    }
    if (next.empty()) {
      std::stable_sort(finished.begin(), finished.end(), by_score);
      return finished;
    }
    hyps = std::move(next);
  }
  for (const Hyp& h : hyps) finished.push_back({h.tokens, false, normalized(h.log_prob, h.tokens.size(), normalize)});
  std::stable_sort(finished.begin(), finished.end(), by_score);
  return finished;
}

// With a beam narrower than the candidates, pruning matters: the k hypotheses found are
// exactly the reference algorithm's (finished ones leave the beam, which shrinks).
TEST(BeamSearch, MatchesTheReferenceAlgorithm) {
  for (const double normalize : {1.0, 0.0}) {
    const auto params = tiny_model<double>(OutputKind::maxout, 29);
    BeamSearch<double> search(params);
    for (const int k : {2, 3, 5}) {
      BeamOptions options;
      options.beam_size = k;
      options.n_best = k;
      options.normalize = normalize;
      for (const auto& source : kSources) {
        SingleRowDecoder<double> decoder(params, source);
        const int max_length = max_output_length(static_cast<int>(source.size()));
        const auto expected = reference_beam(decoder, static_cast<size_t>(k), max_length, normalize);
        const auto found = search.search({source}, options).at(0);
        ASSERT_EQ(found.size(), expected.size());
        for (size_t r = 0; r < found.size(); ++r) {
          EXPECT_EQ(found[r].tokens, expected[r].tokens) << "beam " << k << " rank " << r;
          EXPECT_EQ(found[r].finished, expected[r].finished);
          EXPECT_NEAR(found[r].score, expected[r].score, 1e-12);
        }
      }
    }
  }
}

template <class T>
class BeamSearchTyped : public ::testing::Test {};
using ScalarTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(BeamSearchTyped, ScalarTypes);

template <class T>
double tolerance() {
  return std::is_same<T, float>::value ? 1e-4 : 1e-10;
}

// Beam 1 is greedy decoding: the argmax (over the tokens that may be proposed) at every step.
TYPED_TEST(BeamSearchTyped, GreedyIsStepByStepArgmax) {
  using T = TypeParam;
  for (OutputKind output : {OutputKind::maxout, OutputKind::linear}) {
    const auto params = tiny_model<T>(output, 5);
    BeamSearch<T> search(params);
    BeamOptions options;
    options.beam_size = 1;
    for (const auto& source : kSources) {
      SingleRowDecoder<T> decoder(params, source);
      std::vector<int> tokens;
      double log_prob = 0;
      bool finished = false;
      const int limit = max_output_length(static_cast<int>(source.size()));
      for (int t = 0; t < limit && !finished; ++t) {
        decoder.step();
        int best = kEos;
        for (int w : kWords)
          if (decoder.log_p(w) > decoder.log_p(best)) best = w;
        log_prob += decoder.log_p(best);
        finished = best == kEos;
        if (!finished) tokens.push_back(best);
        decoder.feed(best);
      }
      const auto found = search.search({source}, options).at(0);
      ASSERT_EQ(found.size(), 1u);
      EXPECT_EQ(found[0].tokens, tokens);
      EXPECT_EQ(found[0].finished, finished);
      EXPECT_NEAR(found[0].log_prob, log_prob, tolerance<T>());
      EXPECT_LE(found[0].tokens.size() + (finished ? 1 : 0), static_cast<size_t>(limit));
    }
  }
}

// n-best: K distinct hypotheses, best first; each reported log-probability is the
// teacher-forced one and its score that divided by length^normalize (length with </s>).
TYPED_TEST(BeamSearchTyped, NBestIsSortedDistinctAndScoredByTeacherForcing) {
  using T = TypeParam;
  const auto params = tiny_model<T>(OutputKind::maxout, 21);
  BeamSearch<T> search(params);
  BeamOptions options;
  options.beam_size = 6;
  options.n_best = 4;
  options.normalize = 0.7;
  options.max_output_length = 6;
  for (const auto& source : kSources) {
    SingleRowDecoder<T> decoder(params, source);
    const auto found = search.search({source}, options).at(0);
    ASSERT_EQ(found.size(), 4u);
    std::map<std::vector<int>, int> seen;
    for (size_t k = 0; k < found.size(); ++k) {
      const Hypothesis& h = found[k];
      EXPECT_EQ(++seen[h.tokens], 1) << "duplicate hypothesis at rank " << k;
      if (k > 0) {
        EXPECT_GE(found[k - 1].score, h.score);
      }
      const Forced f = forced_decode(decoder, h.tokens, h.finished);
      EXPECT_NEAR(h.log_prob, f.log_prob, tolerance<T>());
      const size_t length = h.tokens.size() + (h.finished ? 1 : 0);
      EXPECT_NEAR(h.score, normalized(h.log_prob, length, options.normalize), 1e-9);
      if (!h.finished) {
        EXPECT_EQ(h.tokens.size(), 6u);
      }
    }
  }
}

// The alignment is (target + 1) × (source with </s>), row i the attention of step i (the
// teacher-forced one), each row a distribution.
TYPED_TEST(BeamSearchTyped, AlignmentIsTheAttentionOfEveryStep) {
  using T = TypeParam;
  const auto params = tiny_model<T>(OutputKind::maxout, 8);
  BeamSearch<T> search(params);
  BeamOptions options;
  options.beam_size = 4;
  options.n_best = 4;
  options.alignment = true;
  options.max_output_length = 5;
  int cut = 0;
  for (const auto& source : kSources) {
    SingleRowDecoder<T> decoder(params, source);
    const auto found = search.search({source}, options).at(0);
    for (const Hypothesis& h : found) {
      ASSERT_EQ(h.alignment.rows, static_cast<int>(h.tokens.size()) + 1);
      ASSERT_EQ(h.alignment.cols, static_cast<int>(source.size()));
      ASSERT_EQ(h.alignment.weights.size(), static_cast<size_t>(h.alignment.rows * h.alignment.cols));
      const Forced f = forced_decode(decoder, h.tokens, h.finished);
      for (int i = 0; i < h.alignment.rows; ++i) {
        double sum = 0;
        for (int j = 0; j < h.alignment.cols; ++j) {
          sum += h.alignment.at(i, j);
          EXPECT_NEAR(h.alignment.at(i, j), f.attention[i][j], 1e-5) << "row " << i << " column " << j;
        }
        EXPECT_NEAR(sum, 1.0, 1e-5);
      }
      cut += !h.finished;
    }
  }
  EXPECT_GT(cut, 0) << "the limit of 5 should cut some hypotheses (their extra attention row)";
}

// Beam `beam`, all its hypotheses returned, with their attention.
BeamOptions n_best_with_attention(int beam) {
  BeamOptions options;
  options.beam_size = beam;
  options.n_best = beam;
  options.alignment = true;
  return options;
}

// The hypotheses a sentence got while decoded with others equal those it gets alone: the
// same words, scores and attention to float rounding.
template <class T>
void expect_as_alone(const std::vector<Hypothesis>& found, const std::vector<Hypothesis>& alone,
                     const std::string& where) {
  ASSERT_EQ(found.size(), alone.size()) << where;
  for (size_t k = 0; k < alone.size(); ++k) {
    EXPECT_EQ(found[k].tokens, alone[k].tokens) << where << " rank " << k;
    EXPECT_EQ(found[k].finished, alone[k].finished) << where << " rank " << k;
    EXPECT_NEAR(found[k].score, alone[k].score, tolerance<T>()) << where << " rank " << k;
    ASSERT_EQ(found[k].alignment.weights.size(), alone[k].alignment.weights.size()) << where << " rank " << k;
    for (size_t w = 0; w < alone[k].alignment.weights.size(); ++w)
      EXPECT_NEAR(found[k].alignment.weights[w], alone[k].alignment.weights[w], 1e-5) << where << " rank " << k;
  }
}

// Sentences decoded together (their hypotheses share decoder steps) give what each gives
// alone, whatever else is in the batch; workspaces reused between calls change nothing.
TYPED_TEST(BeamSearchTyped, BatchedEqualsOneAtATime) {
  using T = TypeParam;
  const auto params = tiny_model<T>(OutputKind::maxout, 13);
  for (int beam : {1, 3}) {
    const BeamOptions options = n_best_with_attention(beam);
    BeamSearch<T> batched(params), single(params);
    const auto together = batched.search(kSources, options);
    ASSERT_EQ(together.size(), kSources.size());
    for (size_t b = 0; b < kSources.size(); ++b)
      expect_as_alone<T>(together[b], single.search({kSources[b]}, options).at(0),
                         "beam " + std::to_string(beam) + " sentence " + std::to_string(b));
    // Reversed order in a reused workspace: the same per sentence.
    const auto reversed = batched.search(std::vector<std::vector<int>>(kSources.rbegin(), kSources.rend()), options);
    for (size_t b = 0; b < kSources.size(); ++b)
      EXPECT_EQ(reversed[kSources.size() - 1 - b].front().tokens, together[b].front().tokens);
  }
}

// Continuous batching: sentences that join a running search at different steps (into the
// slots of sentences that finished, and with sources longer than any before, which moves
// the attention memory) get what each gets alone; ids follow the order of add().
TYPED_TEST(BeamSearchTyped, SentencesJoiningARunningSearchGetWhatTheyGetAlone) {
  using T = TypeParam;
  const auto params = tiny_model<T>(OutputKind::maxout, 13);
  std::vector<std::vector<int>> sources = kSources;
  sources.push_back({4, 5, 6, 4, 5, 6, 6, 4, 5, 6, 4, 5, kEos});  // longer than kSources'
  for (int beam : {1, 3}) {
    const BeamOptions options = n_best_with_attention(beam);
    BeamSearch<T> continuous(params), single(params);
    std::vector<std::vector<Hypothesis>> found(sources.size());
    std::vector<bool> seen(sources.size(), false);
    continuous.start(options);
    size_t added = 0;
    int steps = 0;
    // one sentence joins every other step; the last joins once the first has finished
    while (added < sources.size() || continuous.sentences() > 0) {
      if (added < sources.size() && steps % 2 == 0 && (added + 1 < sources.size() || seen[0])) {
        EXPECT_EQ(continuous.add({sources[added]}), added);
        ++added;
      }
      for (auto& f : continuous.step()) {
        ASSERT_LT(f.id, sources.size());
        EXPECT_FALSE(seen[f.id]) << "sentence " << f.id << " finished twice";
        seen[f.id] = true;
        found[f.id] = std::move(f.hypotheses);
      }
      ASSERT_LT(++steps, 1000);
    }
    for (size_t b = 0; b < sources.size(); ++b) {
      ASSERT_TRUE(seen[b]) << "sentence " << b;
      expect_as_alone<T>(found[b], single.search({sources[b]}, options).at(0),
                         "beam " + std::to_string(beam) + " sentence " + std::to_string(b));
    }
    // start() drops what is left: a new search starts empty, its ids from 0.
    continuous.add({sources[0]});
    continuous.start(options);
    EXPECT_EQ(continuous.sentences(), 0u);
    EXPECT_TRUE(continuous.step().empty());
    EXPECT_EQ(continuous.add({sources[1]}), 0u);
  }
}

// A sentence removed from a running search (a server's timed-out request) gives no result;
// the others, whether their rows came before or after its rows, and a sentence that joins
// into its slot get what each gets alone.
TYPED_TEST(BeamSearchTyped, SentencesRemovedFromARunningSearchLeaveTheOthersAsAlone) {
  using T = TypeParam;
  const auto params = tiny_model<T>(OutputKind::maxout, 13);
  std::vector<std::vector<int>> sources = kSources;
  sources.push_back({4, 5, 6, 4, 5, 6, 6, 4, 5, 6, 4, 5, kEos});
  for (int beam : {1, 3}) {
    const BeamOptions options = n_best_with_attention(beam);
    BeamSearch<T> continuous(params), single(params);
    continuous.start(options);
    const size_t last = sources.size() - 1;  // joins after the removals
    for (size_t b = 0; b < last; ++b) continuous.add({sources[b]});
    std::vector<std::vector<Hypothesis>> found(sources.size());
    std::vector<bool> seen(sources.size(), false);
    const auto take = [&](std::vector<typename BeamSearch<T>::Finished> finished) {
      for (auto& f : finished) {
        ASSERT_LT(f.id, sources.size());
        EXPECT_FALSE(seen[f.id]) << "sentence " << f.id << " finished twice";
        seen[f.id] = true;
        found[f.id] = std::move(f.hypotheses);
      }
    };
    take(continuous.step());
    const size_t before = continuous.sentences();
    ASSERT_FALSE(seen[1]) << "beam " << beam;
    EXPECT_EQ(continuous.remove({1}), 1u);  // rows in the middle
    EXPECT_EQ(continuous.sentences(), before - 1);
    EXPECT_EQ(continuous.remove({1, 99}), 0u);  // already gone, never added
    take(continuous.step());
    // two at once, the first rows among them
    ASSERT_FALSE(seen[0]) << "beam " << beam;
    std::vector<bool> removed = {true, true, !seen[2]};
    EXPECT_EQ(continuous.remove({0, 2}), removed[2] ? 2u : 1u);
    EXPECT_EQ(continuous.add({sources[last]}), last);  // into a freed slot
    for (int steps = 0; continuous.sentences() > 0; ++steps) {
      take(continuous.step());
      ASSERT_LT(steps, 1000);
    }
    removed.resize(sources.size(), false);
    for (size_t b = 0; b < sources.size(); ++b) {
      const std::string where = "beam " + std::to_string(beam) + " sentence " + std::to_string(b);
      if (removed[b]) {
        EXPECT_FALSE(seen[b]) << where << ": removed, yet it gave a result";
        continue;
      }
      ASSERT_TRUE(seen[b]) << where;
      expect_as_alone<T>(found[b], single.search({sources[b]}, options).at(0), where);
    }
  }
}

// The default limit is the reference's 2·S + 10 (S with </s>), and ⌊F · S⌋ (at least 1)
// with --max-length-factor F: a model that never says </s> is cut exactly there.
TEST(BeamSearch, LengthLimitIsTwiceTheSourcePlusTenOrTheFactorTimesTheSource) {
  auto params = tiny_model<float>(OutputKind::maxout, 2);
  params.vec(out_bo)(kEos) = -1e4f;  // </s> never wins
  BeamSearch<float> search(params);
  BeamOptions options;
  options.beam_size = 2;
  options.n_best = 2;
  for (double factor : {0.0, 0.5, 1.0, 1.5}) {
    options.max_length_factor = factor;
    for (const auto& source : kSources) {
      const size_t limit = factor > 0 ? std::max<size_t>(1, static_cast<size_t>(std::floor(factor * source.size())))
                                      : 2 * source.size() + 10;
      const auto found = search.search({source}, options).at(0);
      ASSERT_EQ(found.size(), 2u);
      for (const Hypothesis& h : found) {
        EXPECT_FALSE(h.finished);
        EXPECT_EQ(h.tokens.size(), limit) << "factor " << factor << ", source of " << source.size();
      }
    }
  }
}

// The score of every hypothesis is the header's formula: log p / lp + cp − W · length, with
// lp = length^normalize or GNMT's ((5 + length) / 6)^α, and cp = β Σ_j log min(Σ_i a_ij, 1)
// computed here from the attention the search returns (its rows of the output tokens).
template <class T>
double expected_score(const Hypothesis& h, const BeamOptions& o) {
  const double n = static_cast<double>(h.tokens.size() + (h.finished ? 1 : 0));
  const double lp = o.length_penalty_alpha >= 0 ? std::pow((5 + n) / 6, o.length_penalty_alpha) : std::pow(n, o.normalize);
  double cp = 0;
  const int rows = h.finished ? h.alignment.rows : h.alignment.rows - 1;  // not the extra row of a cut hypothesis
  for (int j = 0; j < h.alignment.cols; ++j) {
    double sum = 0;
    for (int i = 0; i < rows; ++i) sum += h.alignment.weights[static_cast<size_t>(i * h.alignment.cols + j)];
    cp += std::log(std::max(1e-30, std::min(sum, 1.0)));
  }
  return h.log_prob / lp + o.coverage_penalty * cp - o.word_penalty * n;
}

TYPED_TEST(BeamSearchTyped, DecodingControlsScoreAsTheFormulaSays) {
  using T = TypeParam;
  const auto params = tiny_model<T>(OutputKind::maxout, 21);
  BeamSearch<T> search(params);
  BeamOptions base = n_best_with_attention(6);
  base.max_output_length = 6;
  std::vector<BeamOptions> variants(5, base);
  variants[0].word_penalty = 0.7;
  variants[1].word_penalty = -0.4;
  variants[2].length_penalty_alpha = 0.6;
  variants[3].coverage_penalty = 0.5;
  variants[4].length_penalty_alpha = 1.0, variants[4].coverage_penalty = 0.2, variants[4].word_penalty = 0.1;
  for (size_t v = 0; v < variants.size(); ++v)
    for (const auto& source : kSources) {
      const auto found = search.search({source}, variants[v]).at(0);
      ASSERT_FALSE(found.empty());
      for (size_t k = 0; k < found.size(); ++k) {
        EXPECT_NEAR(found[k].score, expected_score<T>(found[k], variants[v]), 1e-4) << "variant " << v << " rank " << k;
        if (k > 0) {
          EXPECT_GE(found[k - 1].score, found[k].score);
        }
      }
    }
}

// The hypotheses found do not depend on the scoring (candidates are chosen by log-probability),
// only their order does: a large word penalty W > 0 puts the shortest first, W < 0 the longest,
// and a coverage penalty a best whose coverage term is at least the unpenalised best's.
TYPED_TEST(BeamSearchTyped, DecodingControlsMoveTheRankingTheWayTheFormulaSays) {
  using T = TypeParam;
  const auto params = tiny_model<T>(OutputKind::maxout, 21);
  BeamSearch<T> search(params);
  BeamOptions base = n_best_with_attention(6);
  base.max_output_length = 6;
  BeamOptions shorter = base, longer = base, covering = base;
  shorter.word_penalty = 1e4;
  longer.word_penalty = -1e4;
  covering.coverage_penalty = 100;
  BeamOptions coverage_only = base;
  coverage_only.coverage_penalty = 1;
  coverage_only.normalize = 0;
  const auto length = [](const Hypothesis& h) { return h.tokens.size() + (h.finished ? 1 : 0); };
  int moved = 0;
  for (const auto& source : kSources) {
    const auto plain = search.search({source}, base).at(0);
    const auto by_short = search.search({source}, shorter).at(0);
    const auto by_long = search.search({source}, longer).at(0);
    const auto by_coverage = search.search({source}, covering).at(0);
    ASSERT_EQ(by_short.size(), plain.size());
    size_t min_length = 1000, max_length = 0;
    for (const Hypothesis& h : plain) min_length = std::min(min_length, length(h)), max_length = std::max(max_length, length(h));
    EXPECT_EQ(length(by_short.front()), min_length);
    EXPECT_EQ(length(by_long.front()), max_length);
    // cp alone (β = 1, lp = 1, W = 0): score − log p
    const auto cp = [&](const Hypothesis& h) { return expected_score<T>(h, coverage_only) - h.log_prob; };
    EXPECT_GE(cp(by_coverage.front()), cp(plain.front()) - 1e-6);
    moved += by_short.front().tokens != plain.front().tokens || by_long.front().tokens != plain.front().tokens ||
             by_coverage.front().tokens != plain.front().tokens;
  }
  EXPECT_GT(moved, 0) << "no control changed any ranking: the test shows nothing";
}

// Each control keeps a sentence's hypotheses independent of the batch it is decoded in.
TYPED_TEST(BeamSearchTyped, DecodingControlsKeepBatchedEqualToOneAtATime) {
  using T = TypeParam;
  const auto params = tiny_model<T>(OutputKind::maxout, 13);
  BeamOptions base = n_best_with_attention(3);
  std::vector<BeamOptions> variants(4, base);
  variants[0].max_length_factor = 1.5;
  variants[1].word_penalty = 0.5;
  variants[2].length_penalty_alpha = 0.8;
  variants[3].coverage_penalty = 0.4;
  variants[3].alignment = false;  // the attention is then collected for the penalty alone
  for (size_t v = 0; v < variants.size(); ++v) {
    BeamSearch<T> batched(params), single(params);
    const auto together = batched.search(kSources, variants[v]);
    for (size_t b = 0; b < kSources.size(); ++b)
      expect_as_alone<T>(together[b], single.search({kSources[b]}, variants[v]).at(0),
                         "variant " + std::to_string(v) + " sentence " + std::to_string(b));
  }
}

// Target prefixes. The oracle: of every sequence the enumeration scores, those that start
// with the prefix; a beam as wide as the enumeration returns their best, with the same
// scores (the prefix's log-probabilities count), and its attention rows are the teacher-forced
// ones.
TEST(BeamSearch, TargetPrefixIsForcedThenTheBestContinuationsFollow) {
  const auto params = tiny_model<double>(OutputKind::maxout, 11);
  BeamSearch<double> search(params);
  const std::vector<std::vector<int>> prefixes = {{4}, {5, Vocab::kUnk}, {4, 4, 5}};
  int unlikely = 0;  // prefixes that are not what the search finds without them
  for (const auto& source : kSources)
    for (const auto& prefix : prefixes) {
      SingleRowDecoder<double> decoder(params, source);
      std::vector<Candidate> all = enumerate_all(decoder, 5, 1.0);
      const auto free_best = all.front().tokens;
      all.erase(std::remove_if(all.begin(), all.end(),
                               [&](const Candidate& c) {
                                 return c.tokens.size() < prefix.size() ||
                                        !std::equal(prefix.begin(), prefix.end(), c.tokens.begin());
                               }),
                all.end());
      BeamOptions options;
      options.beam_size = 400;
      options.n_best = 4;
      options.alignment = true;
      options.max_output_length = 5;
      const auto one = prefixes_of<double>({prefix});
      const auto found = search.search({source}, options, nullptr, &one).at(0);
      ASSERT_EQ(found.size(), 4u);
      for (size_t k = 0; k < found.size(); ++k) {
        EXPECT_EQ(found[k].tokens, all[k].tokens) << "rank " << k;
        EXPECT_EQ(found[k].finished, all[k].finished) << "rank " << k;
        EXPECT_NEAR(found[k].score, all[k].score, 1e-12) << "rank " << k;
        const Forced f = forced_decode(decoder, found[k].tokens, found[k].finished);
        ASSERT_EQ(static_cast<size_t>(found[k].alignment.rows), f.attention.size());
        for (int i = 0; i < found[k].alignment.rows; ++i)
          for (int j = 0; j < found[k].alignment.cols; ++j)
            EXPECT_NEAR(found[k].alignment.at(i, j), f.attention[i][j], 1e-6) << "rank " << k << " row " << i;
      }
      unlikely += !std::equal(prefix.begin(), prefix.end(), free_best.begin(),
                              free_best.begin() + static_cast<long>(std::min(prefix.size(), free_best.size())));
    }
  EXPECT_GT(unlikely, 0) << "every prefix was the model's own choice: the test shows nothing";
}

// The length limit makes room for the prefix and </s>; an empty prefix is no prefix; a
// prefix holding </s>, <s> or <pad> is refused.
TEST(BeamSearch, TargetPrefixLongerThanTheLimitIsStillForcedAndFollowedByEos) {
  const auto params = tiny_model<double>(OutputKind::maxout, 5);
  BeamSearch<double> search(params);
  BeamOptions options = n_best_with_attention(3);
  options.max_output_length = 2;
  const auto prefixes = prefixes_of<double>({{4, 5, 4, 4}, {}});
  const auto found = search.search({kSources[0], kSources[1]}, options, nullptr, &prefixes);
  for (const Hypothesis& h : found[0]) {
    ASSERT_GE(h.tokens.size(), 4u);
    EXPECT_EQ(std::vector<int>(h.tokens.begin(), h.tokens.begin() + 4), prefixes[0].prefix);
    EXPECT_LE(h.tokens.size() + (h.finished ? 1 : 0), 5u);
  }
  const auto without = search.search({kSources[1]}, options).at(0);
  ASSERT_EQ(found[1].size(), without.size());
  for (size_t k = 0; k < without.size(); ++k) EXPECT_EQ(found[1][k].tokens, without[k].tokens);
  for (int special : {Vocab::kEos, Vocab::kBos, Vocab::kPad}) {
    const auto bad = prefixes_of<double>({{4, special}});
    EXPECT_THROW(search.search({kSources[0]}, options, nullptr, &bad), Error);
  }
}

// With subword pieces (set_word_pieces), the token right after a prefix begins a word; later
// ones may continue words.
TEST(BeamSearch, TargetPrefixIsFollowedByAWordStart) {
  const auto params = tiny_model<double>(OutputKind::maxout, 11);
  BeamOptions options = n_best_with_attention(4);
  options.max_output_length = 6;
  const auto prefix = prefixes_of<double>({{4}});
  BeamSearch<double> plain(params), pieces(params);
  std::vector<char> continues(6, kStartsWord);
  continues[5] = kLetter;  // token 5 is a piece that continues a word
  pieces.set_word_pieces(continues, {"<pad>", "<unk>", "<s>", "</s>", "\u2581a", "b"});
  int before = 0, later = 0;
  for (const auto& source : kSources) {
    const auto free = plain.search({source}, options, nullptr, &prefix);
    for (const Hypothesis& h : free.at(0)) before += h.tokens.size() > 1 && h.tokens[1] == 5;
    const auto barred = pieces.search({source}, options, nullptr, &prefix);
    for (const Hypothesis& h : barred.at(0)) {
      ASSERT_EQ(h.tokens.at(0), 4);
      EXPECT_TRUE(h.tokens.size() < 2 || h.tokens[1] != 5);
      later += std::count(h.tokens.begin() + 1, h.tokens.end(), 5) > 0;
    }
  }
  EXPECT_GT(before, 0) << "token 5 never follows the prefix anyway: the test shows nothing";
  EXPECT_GT(later, 0) << "token 5 is barred everywhere, not only right after the prefix";
}

// Per-sentence prefixes keep a sentence's hypotheses independent of its batch, in one search
// and in a running one that sentences join at different steps, and over a shortlist that holds
// the prefixes' words.
TYPED_TEST(BeamSearchTyped, TargetPrefixesKeepBatchedEqualToOneAtATime) {
  using T = TypeParam;
  const auto params = tiny_model<T>(OutputKind::maxout, 13);
  const std::vector<std::vector<int>> prefixes = {{5}, {}, {4, Vocab::kUnk}, {5, 5, 5}, {4}};
  const std::vector<int> shortlist = {Vocab::kUnk, kEos, 4, 5};
  for (const std::vector<int>* words : {static_cast<const std::vector<int>*>(nullptr), &shortlist}) {
    const BeamOptions options = n_best_with_attention(3);
    BeamSearch<T> batched(params), single(params), continuous(params);
    const auto all = prefixes_of<T>(prefixes);
    const auto together = batched.search(kSources, options, words, &all);
    std::vector<std::vector<Hypothesis>> joined(kSources.size());
    continuous.start(options, words);
    for (size_t b = 0, steps = 0; b < kSources.size() || continuous.sentences() > 0; ++steps) {
      if (b < kSources.size() && steps % 2 == 0) {
        const auto one = prefixes_of<T>({prefixes[b]});
        continuous.add({kSources[b]}, &one);
        ++b;
      }
      for (auto& f : continuous.step()) joined[f.id] = std::move(f.hypotheses);
      ASSERT_LT(steps, 1000u);
    }
    for (size_t b = 0; b < kSources.size(); ++b) {
      const auto one = prefixes_of<T>({prefixes[b]});
      const auto alone = single.search({kSources[b]}, options, words, &one).at(0);
      const std::string where = std::string(words ? "shortlist" : "full") + " sentence " + std::to_string(b);
      expect_as_alone<T>(together[b], alone, where + " batched");
      expect_as_alone<T>(joined[b], alone, where + " joined");
      for (const Hypothesis& h : alone) {
        ASSERT_GE(h.tokens.size(), prefixes[b].size()) << where;
        EXPECT_TRUE(std::equal(prefixes[b].begin(), prefixes[b].end(), h.tokens.begin())) << where;
      }
    }
  }
}

// The message ranks exchange (util/mpi.h): hypotheses come back field for field, and a
// message cut short is an error, not garbage.
TEST(BeamSearch, HypothesesSurviveAnMpiMessage) {
  auto params = tiny_model<float>(OutputKind::maxout, 2);
  BeamSearch<float> search(params);
  BeamOptions options;
  options.beam_size = 3;
  options.n_best = 3;
  options.alignment = true;
  std::vector<Hypothesis> found = search.search({kSources.front()}, options).at(0);
  found.front().words = {"ein", "Wort"};
  found.front().target_pieces = {"▁ein", "▁Wo", "rt"};
  mpi::Writer message;
  write_hypotheses(message, found);
  message.put(std::string("after"));
  mpi::Reader reader(message.bytes());
  std::vector<Hypothesis> read;
  read_hypotheses(reader, read);
  ASSERT_EQ(read.size(), found.size());
  for (size_t k = 0; k < found.size(); ++k) {
    EXPECT_EQ(read[k].tokens, found[k].tokens);
    EXPECT_EQ(read[k].words, found[k].words);
    EXPECT_EQ(read[k].target_pieces, found[k].target_pieces);
    EXPECT_EQ(read[k].finished, found[k].finished);
    EXPECT_EQ(read[k].log_prob, found[k].log_prob);
    EXPECT_EQ(read[k].score, found[k].score);
    EXPECT_EQ(read[k].alignment.rows, found[k].alignment.rows);
    EXPECT_EQ(read[k].alignment.cols, found[k].alignment.cols);
    EXPECT_EQ(read[k].alignment.weights, found[k].alignment.weights);
  }
  std::string after;
  reader.get(after);
  EXPECT_EQ(after, "after");
  EXPECT_TRUE(reader.done());
  const std::string cut = message.bytes().substr(0, message.bytes().size() / 2);
  mpi::Reader short_reader(cut);
  EXPECT_THROW(read_hypotheses(short_reader, read), std::out_of_range);
}

// Few sentences are cut so that every thread gets a batch; many keep --batch-size.
TEST(ParallelBatches, FewItemsGiveEveryThreadABatch) {
  EXPECT_EQ(balanced_batch_size(32, 32, 2), 16u);
  EXPECT_EQ(balanced_batch_size(33, 32, 2), 17u);
  EXPECT_EQ(balanced_batch_size(1000, 32, 2), 32u);
  EXPECT_EQ(balanced_batch_size(64, 32, 2), 32u);
  EXPECT_EQ(balanced_batch_size(1, 32, 4), 1u);
  EXPECT_EQ(balanced_batch_size(0, 32, 2), 1u);
  EXPECT_EQ(balanced_batch_size(32, 32, 1), 32u);
  // 32 items on 2 threads run as 2 batches, together covering every item once.
  std::vector<size_t> order(32);
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::vector<int> seen(order.size(), 0);
  int batches = 0;
  run_batches(order, balanced_batch_size(order.size(), 32, 2), 2, [&](const std::vector<size_t>& members, int) {
#pragma omp critical(test_parallel_batches)
    {
      ++batches;
      for (size_t k : members) ++seen[k];
    }
  });
  EXPECT_EQ(batches, 2);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 32);
}

// A lone batch runs with the GEMM libraries' threading off (one OpenMP thread inside it), and
// the caller's thread count is back afterwards, also when the batch throws.
TEST(ParallelBatches, ALoneBatchRunsOnOneThreadAndRestoresTheSetting) {
  const int before = omp_get_max_threads();
  omp_set_num_threads(2);
  const std::vector<size_t> one{0};
  int inside = 0;
  run_batches(one, 32, 2, [&](const std::vector<size_t>&, int) { inside = omp_get_max_threads(); });
  EXPECT_EQ(inside, 1);
  EXPECT_EQ(omp_get_max_threads(), 2);
  EXPECT_THROW(run_batches(one, 32, 2, [](const std::vector<size_t>&, int) { throw Error("batch failed"); }), Error);
  EXPECT_EQ(omp_get_max_threads(), 2);
  // Two batches on two threads leave the libraries' threading as it was
  const std::vector<size_t> two{0, 1};
  run_batches(two, 1, 2, [&](const std::vector<size_t>&, int) {
#pragma omp critical(test_parallel_batches)
    inside = omp_get_max_threads();
  });
  EXPECT_EQ(inside, 2);
  omp_set_num_threads(before);
}

}  // namespace
}  // namespace rnnsearch
