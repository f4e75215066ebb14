#include "rnnsearch/align/hmm.h"

#include <unicode/locid.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <boost/math/special_functions/digamma.hpp>
#include <cmath>
#include <sstream>
#include <unordered_map>

#include "rnnsearch/error.h"
#include "rnnsearch/text/pair_problem.h"
#include "rnnsearch/text/tokenizer.h"
#include "rnnsearch/util/checks.h"

namespace rnnsearch::align {

namespace {

// The white-space words of a line.
std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> words;
  for (std::string_view word : white_space_tokens(line)) words.emplace_back(word);
  return words;
}

// A word as it is counted: lowercased, and cut to its first `stem` characters (code points)
// when stem > 0.
std::string counted_form(const std::string& word, int stem) {
  icu::UnicodeString text = icu::UnicodeString::fromUTF8(icu::StringPiece(word.data(), static_cast<int32_t>(word.size())));
  text.toLower(icu::Locale::getRoot());
  if (stem > 0) text.truncate(text.moveIndex32(0, stem));
  std::string out;
  text.toUTF8String(out);
  return out;
}

// The ids of a line's white-space words, new words numbered from first_id + ids.size().
std::vector<int> word_ids(const std::string& line, int stem, std::unordered_map<std::string, int>& ids, int first_id) {
  std::vector<int> out;
  for (const std::string& word : split_words(line))
    out.push_back(ids.emplace(counted_form(word, stem), first_id + static_cast<int>(ids.size())).first->second);
  return out;
}

size_t jump_index(int d) {
  return static_cast<size_t>(std::clamp(d, -HmmAligner::kMaxJump, HmmAligner::kMaxJump) + HmmAligner::kMaxJump);
}

}  // namespace

WordIdCorpus word_id_corpus(const std::vector<std::string>& source_lines, const std::vector<std::string>& target_lines,
                            int stem) {
  WordIdCorpus corpus;
  std::unordered_map<std::string, int> source_ids, target_ids;
  for (const std::string& line : source_lines) corpus.source.push_back(word_ids(line, stem, source_ids, 1));
  for (const std::string& line : target_lines) corpus.target.push_back(word_ids(line, stem, target_ids, 0));
  corpus.source_words = 1 + static_cast<int>(source_ids.size());
  corpus.target_words = static_cast<int>(target_ids.size());
  return corpus;
}

WordIdCorpus reversed(const WordIdCorpus& corpus) {
  WordIdCorpus r;
  r.source_words = corpus.target_words + 1;
  r.target_words = corpus.source_words - 1;
  for (const auto& words : corpus.target) {
    r.source.emplace_back(words);
    for (int& w : r.source.back()) ++w;
  }
  for (const auto& words : corpus.source) {
    r.target.emplace_back(words);
    for (int& w : r.target.back()) --w;
  }
  return r;
}

// One pair's buffers, grown to the longest pair a thread meets and reused (I source words,
// J target words, P = I + 1 previous positions: q = 0 before the first word, q = i' + 1 at i').
struct HmmAligner::Workspace {
  std::vector<double> emit;      // J × I   t(t_j | s_i)
  std::vector<double> emit_null; // J       t(t_j | ∅)
  std::vector<int> entry;        // J × (I + 1) table indices, ∅ last
  std::vector<double> dist;      // P × I   the jump distribution from q: c(i - i') / Σ
  std::vector<double> alpha;     // J × I   scaled forward probabilities of a_j = i
  std::vector<double> alpha_null;// J × P   ... of a_j = ∅ with the last word at q
  std::vector<double> beta;      // J × P   scaled backward probabilities from position q
  std::vector<double> scale;     // J       c_j, the forward's normalizers: Π c_j = p(t | s)
  std::vector<double> from;      // J × P   A_{j-1}(q): where step j jumps from
  std::vector<double> next;      // I       a step's emission × backward
  std::vector<double> posterior; // J × (I + 1)  p(a_j = i | s, t), ∅ last
};

HmmAligner::HmmAligner(const WordIdCorpus& corpus, const HmmOptions& options)
    : corpus_(corpus), options_(options), jump_(2 * kMaxJump + 1, 1.0) {
  // The table's rows: every target word with ∅ and with each source word of its pairs.
  std::vector<std::vector<int>> seen(static_cast<size_t>(corpus.source_words));
  for (size_t k = 0; k < corpus.source.size(); ++k)
    for (int f : corpus.target[k]) {
      seen[0].push_back(f);
      for (int e : corpus.source[k]) seen[static_cast<size_t>(e)].push_back(f);
    }
  row_.assign(seen.size() + 1, 0);
  for (size_t e = 0; e < seen.size(); ++e) {
    std::sort(seen[e].begin(), seen[e].end());
    seen[e].erase(std::unique(seen[e].begin(), seen[e].end()), seen[e].end());
    row_[e + 1] = row_[e] + seen[e].size();
  }
  target_.reserve(row_.back());
  prob_.reserve(row_.back());
  for (auto& fs : seen) {
    for (int f : fs) {
      target_.push_back(f);
      prob_.push_back(1.0 / static_cast<double>(fs.size()));  // uniform: IBM 1's first E step
    }
    std::vector<int>().swap(fs);
  }
}

int HmmAligner::entry(int e, int f) const {
  const auto begin = target_.begin() + static_cast<long>(row_[static_cast<size_t>(e)]);
  const auto end = target_.begin() + static_cast<long>(row_[static_cast<size_t>(e) + 1]);
  const auto at = std::lower_bound(begin, end, f);
  return at != end && *at == f ? static_cast<int>(at - target_.begin()) : -1;
}

double HmmAligner::translation(int e, int f) const {
  if (e < 0 || e >= corpus_.source_words) return 0;
  const int at = entry(e, f);
  return at < 0 ? 0 : prob_[static_cast<size_t>(at)];
}

std::vector<double> HmmAligner::jumps() const {
  double total = 0;
  for (double c : jump_) total += c;
  std::vector<double> out;
  for (double c : jump_) out.push_back(c / total);
  return out;
}

// t(f | e) = exp ψ(n(f, e) + α) / exp ψ(Σ_f' n(f', e) + α · F_e), or n / Σ n when α = 0.
void HmmAligner::normalize_translations(const std::vector<double>& counts) {
  const double alpha = options_.prior;
  const auto rows = static_cast<long>(row_.size() - 1);
#pragma omp parallel for num_threads(options_.threads) schedule(dynamic, 256)
  for (long e = 0; e < rows; ++e) {
    const size_t begin = row_[static_cast<size_t>(e)], end = row_[static_cast<size_t>(e) + 1];
    if (begin == end) continue;  // a word of no usable pair (∅ when there is none): ψ(0) is a pole
    double total = 0;
    for (size_t k = begin; k < end; ++k) total += counts[k];
    if (alpha > 0) {
      const double norm = boost::math::digamma(total + alpha * static_cast<double>(end - begin));
      for (size_t k = begin; k < end; ++k) prob_[k] = std::exp(boost::math::digamma(counts[k] + alpha) - norm);
    } else if (total > 0) {
      for (size_t k = begin; k < end; ++k) prob_[k] = counts[k] / total;
    }
  }
  // Boost.Math returns NaN or ±inf rather than throwing (CMakeLists.txt): a prior so small that
  // ψ overflows (α below about 1e-308) leaves such entries, reported here, outside the loop.
  for (double p : prob_)
    if (!std::isfinite(p)) {
      std::ostringstream text;
      text << "the HMM aligner's translation table is not finite: --prior " << alpha << " is out of digamma's range";
      throw Error(text.str());
    }
}

// Fills w for pair k: emissions, jump distributions, then the scaled forward
//   α_j(i) = t(t_j | s_i) (1 - p0) Σ_q A_{j-1}(q) dist(q, i) / c_j
//   α_j(∅, q) = t(t_j | ∅) p0 A_{j-1}(q) / c_j,   A_j(q) = α_j(q - 1) + α_j(∅, q),  A_{-1} = [1 0 ... 0]
// and backward (it depends only on the position q a state continues from)
//   β_j(q) = ((1 - p0) Σ_i dist(q, i) t(t_{j+1} | s_i) β_{j+1}(i + 1) + p0 t(t_{j+1} | ∅) β_{j+1}(q)) / c_{j+1},
//   β_{J-1} = 1,
// so that p(a_j = i | s, t) = α_j(i) β_j(i + 1) and p(a_j = ∅ | s, t) = Σ_q α_j(∅, q) β_j(q).
void HmmAligner::forward_backward(size_t pair, Workspace& w) const {
  const std::vector<int>& src = corpus_.source[pair];
  const std::vector<int>& tgt = corpus_.target[pair];
  const size_t I = src.size(), J = tgt.size(), P = I + 1;
  const double p0 = options_.null_probability;
  w.emit.resize(J * I);
  w.emit_null.resize(J);
  w.entry.resize(J * P);
  w.dist.resize(P * I);
  w.alpha.resize(J * I);
  w.alpha_null.resize(J * P);
  w.beta.resize(J * P);
  w.scale.resize(J);
  w.from.resize(J * P);
  w.next.resize(I);
  for (size_t j = 0; j < J; ++j) {
    for (size_t i = 0; i < I; ++i) {
      w.entry[j * P + i] = entry(src[i], tgt[j]);
      w.emit[j * I + i] = prob_[static_cast<size_t>(w.entry[j * P + i])];
    }
    w.entry[j * P + I] = entry(0, tgt[j]);
    w.emit_null[j] = prob_[static_cast<size_t>(w.entry[j * P + I])];
  }
  for (size_t q = 0; q < P; ++q) {  // from position i' = q - 1 to i: a jump of i - q + 1
    double total = 0;
    for (size_t i = 0; i < I; ++i) total += w.dist[q * I + i] = jump_[jump_index(static_cast<int>(i) - static_cast<int>(q) + 1)];
    for (size_t i = 0; i < I; ++i) w.dist[q * I + i] /= total;
  }
  for (size_t j = 0; j < J; ++j) {
    double* from = &w.from[j * P];
    for (size_t q = 0; q < P; ++q)
      from[q] = j == 0 ? (q == 0 ? 1.0 : 0.0) : w.alpha_null[(j - 1) * P + q] + (q > 0 ? w.alpha[(j - 1) * I + q - 1] : 0);
    double c = 0;
    for (size_t i = 0; i < I; ++i) {
      double s = 0;
      for (size_t q = 0; q < P; ++q) s += from[q] * w.dist[q * I + i];
      c += w.alpha[j * I + i] = w.emit[j * I + i] * (1 - p0) * s;
    }
    for (size_t q = 0; q < P; ++q) c += w.alpha_null[j * P + q] = w.emit_null[j] * p0 * from[q];
    w.scale[j] = c;
    for (size_t i = 0; i < I; ++i) w.alpha[j * I + i] /= c;
    for (size_t q = 0; q < P; ++q) w.alpha_null[j * P + q] /= c;
  }
  for (size_t q = 0; q < P; ++q) w.beta[(J - 1) * P + q] = 1;
  for (size_t j = J - 1; j-- > 0;) {
    for (size_t i = 0; i < I; ++i) w.next[i] = w.emit[(j + 1) * I + i] * w.beta[(j + 1) * P + i + 1];
    for (size_t q = 0; q < P; ++q) {
      double s = 0;
      for (size_t i = 0; i < I; ++i) s += w.dist[q * I + i] * w.next[i];
      w.beta[j * P + q] = ((1 - p0) * s + p0 * w.emit_null[j + 1] * w.beta[(j + 1) * P + q]) / w.scale[j + 1];
    }
  }
}

// w.posterior = p(a_j = i | s, t), J × (I + 1), ∅ last. IBM model 1:
//   p(a_j = i | s, t) = t(t_j | s_i) / (t(t_j | ∅) + Σ_i' t(t_j | s_i'));
// the HMM: forward_backward's, and into jump_counts (when given) the expected jumps
//   ξ_j(q → i) = A_{j-1}(q) (1 - p0) dist(q, i) t(t_j | s_i) β_j(i + 1) / c_j.
void HmmAligner::posterior(size_t pair, Workspace& w, std::vector<double>* jump_counts) const {
  const std::vector<int>& src = corpus_.source[pair];
  const std::vector<int>& tgt = corpus_.target[pair];
  const size_t I = src.size(), J = tgt.size(), P = I + 1;
  w.posterior.resize(J * P);
  if (!hmm_) {
    w.entry.resize(J * P);
    for (size_t j = 0; j < J; ++j) {
      double total = 0;
      for (size_t i = 0; i < P; ++i) {
        w.entry[j * P + i] = entry(i < I ? src[i] : 0, tgt[j]);
        total += w.posterior[j * P + i] = prob_[static_cast<size_t>(w.entry[j * P + i])];
      }
      for (size_t i = 0; i < P; ++i) w.posterior[j * P + i] /= total;
    }
    return;
  }
  forward_backward(pair, w);
  const double p0 = options_.null_probability;
  for (size_t j = 0; j < J; ++j) {
    double null_posterior = 0;
    for (size_t q = 0; q < P; ++q) null_posterior += w.alpha_null[j * P + q] * w.beta[j * P + q];
    w.posterior[j * P + I] = null_posterior;
    for (size_t i = 0; i < I; ++i) w.posterior[j * P + i] = w.alpha[j * I + i] * w.beta[j * P + i + 1];
    if (!jump_counts) continue;
    for (size_t i = 0; i < I; ++i) w.next[i] = w.emit[j * I + i] * w.beta[j * P + i + 1] * (1 - p0) / w.scale[j];
    for (size_t q = 0; q < P; ++q) {
      const double a = w.from[j * P + q];
      if (a == 0) continue;
      for (size_t i = 0; i < I; ++i)
        (*jump_counts)[jump_index(static_cast<int>(i) - static_cast<int>(q) + 1)] += a * w.dist[q * I + i] * w.next[i];
    }
  }
}

void HmmAligner::add_counts(size_t pair, const Workspace& w, std::vector<double>& counts) const {
  const size_t P = corpus_.source[pair].size() + 1, cells = corpus_.target[pair].size() * P;
  for (size_t k = 0; k < cells; ++k) counts[static_cast<size_t>(w.entry[k])] += w.posterior[k];
}

void HmmAligner::maximize(const std::vector<double>& counts, const std::vector<double>& jump_counts) {
  normalize_translations(counts);
  if (hmm_)
    for (size_t d = 0; d < jump_.size(); ++d) jump_[d] = jump_counts[d] + 1e-3;  // no jump ever impossible
}

Alignment HmmAligner::posteriors(size_t pair) const {
  const std::vector<int>& src = corpus_.source[pair];
  const std::vector<int>& tgt = corpus_.target[pair];
  const int I = static_cast<int>(src.size()), J = static_cast<int>(tgt.size());
  if (I == 0 || J == 0) return Alignment{1, 1, {0.0f}};
  thread_local Workspace w;  // grown once per thread, not per pair
  posterior(pair, w, nullptr);
  Alignment out{J + 1, I + 1, std::vector<float>(static_cast<size_t>((J + 1) * (I + 1)), 0.0f)};
  for (size_t k = 0; k < w.posterior.size(); ++k) out.weights[k] = static_cast<float>(w.posterior[k]);
  return out;
}

// Agreement (after Liang, Taskar & Klein 2006), in the HMM iterations: both directions count
// a link (i, j) by the product of their posteriors, p→(a_j = i) · p←(b_i = j), and ∅ by
// their own posterior, so that links only one direction believes in fade from both tables.
// (Measured on the RWTH development set, docs/aligning.md: agreeing already in the IBM model
// 1 iterations, or giving ∅ what the products leave of each word, starves the table.)
void train_hmm_aligners(HmmAligner& forward, HmmAligner* reverse, bool agreement,
                        const std::function<void(const char*, int)>& iteration) {
  const HmmOptions& options = forward.options_;
  const auto pairs = static_cast<long>(forward.corpus_.source.size());
  const int iterations = options.ibm1_iterations + options.hmm_iterations;
  for (int it = 0; it < iterations; ++it) {
    forward.hmm_ = it >= options.ibm1_iterations;
    if (reverse) reverse->hmm_ = forward.hmm_;
    const size_t table = forward.prob_.size(), reverse_table = reverse ? reverse->prob_.size() : 0;
    std::vector<double> counts(table, 0.0), reverse_counts(reverse_table, 0.0);
    std::vector<double> jumps(forward.jump_.size(), 0.0), reverse_jumps(jumps.size(), 0.0);
#pragma omp parallel num_threads(options.threads)
    {
      std::vector<double> mine(table, 0.0), my_jumps(jumps.size(), 0.0);
      std::vector<double> mine_r(reverse_table, 0.0), my_jumps_r(jumps.size(), 0.0);
      HmmAligner::Workspace w, wr;
#pragma omp for schedule(dynamic, 64)
      for (long k = 0; k < pairs; ++k) {
        const auto pair = static_cast<size_t>(k);
        const size_t I = forward.corpus_.source[pair].size(), J = forward.corpus_.target[pair].size();
        if (I == 0 || J == 0) continue;
        forward.posterior(pair, w, &my_jumps);
        if (reverse) reverse->posterior(pair, wr, &my_jumps_r);
        if (reverse && agreement && forward.hmm_) {
          // w.posterior is J × (I + 1), wr.posterior I × (J + 1); ∅ keeps each one's own
          for (size_t j = 0; j < J; ++j)
            for (size_t i = 0; i < I; ++i)
              w.posterior[j * (I + 1) + i] = wr.posterior[i * (J + 1) + j] =
                  w.posterior[j * (I + 1) + i] * wr.posterior[i * (J + 1) + j];
        }
        forward.add_counts(pair, w, mine);
        if (reverse) reverse->add_counts(pair, wr, mine_r);
      }
#pragma omp critical
      {
        for (size_t k = 0; k < table; ++k) counts[k] += mine[k];
        for (size_t k = 0; k < reverse_table; ++k) reverse_counts[k] += mine_r[k];
        for (size_t k = 0; k < jumps.size(); ++k) jumps[k] += my_jumps[k], reverse_jumps[k] += my_jumps_r[k];
      }
    }
    forward.maximize(counts, jumps);
    if (reverse) reverse->maximize(reverse_counts, reverse_jumps);
    if (iteration) iteration(forward.hmm_ ? "hmm" : "ibm1", forward.hmm_ ? it + 1 - options.ibm1_iterations : it + 1);
  }
}

void check_hmm_options(const HmmOptions& options) {
  check_at_least("ibm1-iterations", options.ibm1_iterations, 0);
  check_at_least("hmm-iterations", options.hmm_iterations, 0);
  check_below_one("null-probability", options.null_probability);
  check_non_negative("prior", options.prior);
  // ψ(α) ≈ -1/α overflows below about 1e-308 (normalize_translations)
  if (options.prior > 0 && options.prior < 1e-300) fail_check("prior", "0 or at least 1e-300", options.prior);
  check_at_least("stem", options.stem, 0);
  check_at_least("max-length", options.max_length, 1);
}

std::vector<AlignedPair> hmm_align(const std::vector<std::string>& src_lines, const std::vector<std::string>& tgt_lines,
                                   const HmmOptions& options, const AlignMethod& method,
                                   std::optional<Symmetrization> symmetrize,
                                   const std::function<void(const char*, int)>& iteration) {
  check_hmm_options(options);
  if (src_lines.size() != tgt_lines.size())
    throw Error("the sources and targets differ in length: " + std::to_string(src_lines.size()) + " and " +
                std::to_string(tgt_lines.size()));
  symmetrize = resolved_symmetrization(true, method, symmetrize);
  // A pair with invalid UTF-8, an empty side or a side too long is left out of training and
  // unaligned, with the Scorer's warnings (text/pair_problem.h).
  std::vector<AlignedPair> pairs(src_lines.size());
  std::vector<std::string> src = src_lines, tgt = tgt_lines;
  const auto max_length = static_cast<size_t>(options.max_length);
  for (size_t k = 0; k < pairs.size(); ++k) {
    AlignedPair& pair = pairs[k];
    pair.line = k;
    const PairProblem problem = pair_problem(src[k], tgt[k], max_length, split_words, pair.source, pair.target);
    pair.warning = problem.warning;
    pair.target_side = problem.target_side;
    pair.aligned = pair.warning.empty();
    if (!pair.aligned) src[k].clear(), tgt[k].clear();
  }
  const WordIdCorpus corpus = word_id_corpus(src, tgt, options.stem), back = reversed(corpus);
  HmmAligner forward(corpus, options), reverse(back, options);
  train_hmm_aligners(forward, &reverse, options.agreement, iteration);
  const auto count = static_cast<long>(pairs.size());
#pragma omp parallel for num_threads(options.threads) schedule(dynamic, 64)
  for (long k = 0; k < count; ++k) {
    AlignedPair& pair = pairs[static_cast<size_t>(k)];
    if (!pair.aligned) continue;
    const Alignment f = forward.posteriors(static_cast<size_t>(k)), r = reverse.posteriors(static_cast<size_t>(k));
    pair.links = pair_links(f, &r, method, symmetrize);
  }
  return pairs;
}

}  // namespace rnnsearch::align
