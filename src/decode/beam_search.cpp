#include "rnnsearch/decode/beam_search.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "rnnsearch/decode/decode_options.h"
#include "rnnsearch/decode/steering.h"
#include "rnnsearch/error.h"
#include "rnnsearch/text/vocab.h"

namespace rnnsearch {

template <class T>
BeamSearch<T>::BeamSearch(const std::vector<const Parameters<T>*>& models,
                          const std::vector<LowPrecisionProjection>& low_precision) {
  if (models.empty()) throw Error("beam search needs a model");
  if (!low_precision.empty() && low_precision.size() != models.size())
    throw std::logic_error("BeamSearch: one low-precision projection per model");
  for (const Parameters<T>* params : models) members_.push_back(Member{params, {}, {}, {}, {}, {}, {}});
  for (size_t m = 0; m < low_precision.size(); ++m) {
    members_[m].step.output.bf16 = low_precision[m].bf16;
    members_[m].step.output.int8 = low_precision[m].int8;
  }
}

// Every model's decoder step on the same rows; a single model's results are used as they
// are, an ensemble's are averaged.
template <class T>
void BeamSearch<T>::run_models(Index rows) {
  for (Member& m : members_) {
    const AttentionMemory<T> memory{&m.annotations, &m.keys, stride_, slot_lengths_.data()};
    decoder_step<T>(*m.params, memory, row_sentence_.data(), m.s_prev.topRows(rows), y_prev_.data(), m.step,
                    shortlist_ ? &m.shortlist : nullptr);
  }
  log_probs_ = &members_.front().step.log_probs;
  alpha_ = &members_.front().step.alpha;
  if (members_.size() == 1) return;
  const T weight = T(1) / static_cast<T>(members_.size());
  auto log_probs = rows_of(mean_log_probs_, rows, members_.front().step.log_probs.cols());
  auto alpha = rows_of(mean_alpha_, rows, members_.front().step.alpha.cols());
  log_probs.setZero();
  alpha.setZero();
  for (const Member& m : members_) {
    log_probs += weight * m.step.log_probs.topRows(rows);
    alpha += weight * m.step.alpha.topRows(rows);
  }
  log_probs_ = &mean_log_probs_;
  alpha_ = &mean_alpha_;
}

template <class T>
std::vector<std::vector<Hypothesis>> BeamSearch<T>::search(const std::vector<std::vector<int>>& sources,
                                                           const BeamOptions& options,
                                                           const std::vector<int>* shortlist,
                                                           const Steerings* steering,
                                                           const std::vector<uint64_t>* keys) {
  start(options, shortlist);
  std::vector<std::vector<Hypothesis>> results(sources.size());
  add(sources, steering, keys);
  while (sentences() > 0)
    for (Finished& f : step()) results[f.id] = std::move(f.hypotheses);
  return results;
}

template <class T>
void BeamSearch<T>::start(const BeamOptions& options, const std::vector<int>* shortlist) {
  check_beam_options(options);
  options_ = options;
  shortlist_ = shortlist;
  if (shortlist)
    for (Member& m : members_) select_output_words<T>(*m.params, *shortlist, m.shortlist);
  for (Sentence& s : sentences_) s.live.clear();
  order_.clear();
  row_sentence_.clear();
  y_prev_.clear();
  next_id_ = 0;
}

// The padded time-major batch, encoded once: annotations, keys and s_0 serve every step.
template <class T>
void BeamSearch<T>::encode(const std::vector<std::vector<int>>& sources) {
  const Index B = static_cast<Index>(sources.size());
  lengths_.clear();
  for (const auto& ids : sources) {
    if (ids.empty() || ids.back() != Vocab::kEos) throw Error("beam search: a source must end with </s>");
    lengths_.push_back(static_cast<int>(ids.size()));
  }
  const Index S = *std::max_element(lengths_.begin(), lengths_.end());
  src_.assign(S * B, Vocab::kPad);
  for (Index b = 0; b < B; ++b)
    for (Index j = 0; j < lengths_[b]; ++j) src_[j * B + b] = sources[b][j];
  for (Member& m : members_) encoder_forward<T>(*m.params, src_.data(), lengths_.data(), B, S, 0.0, 0.0, 0.0, 0, m.encoder);
}

// Room in the attention memory for `slots` slots of at least `stride` rows; the sentences in
// the search keep their annotations and keys (moved when the stride grows).
template <class T>
void BeamSearch<T>::reserve_memory(Index slots, Index stride) {
  stride = std::max(stride, stride_);
  for (Member& m : members_) {
    const Index capacity = stride_ > 0 ? m.annotations.rows() / stride_ : 0;  // slots that fit now
    if (stride == stride_ && capacity >= slots) continue;
    const Index grown = std::max(slots, stride == stride_ ? 2 * capacity : capacity);
    Mat<T> annotations(grown * stride, m.encoder.annotations.cols()), keys(grown * stride, m.encoder.keys.cols());
    for (int b : order_) {
      annotations.middleRows(b * stride, slot_lengths_[b]) = m.annotations.middleRows(b * stride_, slot_lengths_[b]);
      keys.middleRows(b * stride, slot_lengths_[b]) = m.keys.middleRows(b * stride_, slot_lengths_[b]);
    }
    m.annotations.swap(annotations);
    m.keys.swap(keys);
  }
  stride_ = stride;
}

// Each source gets a free slot and one hypothesis, <s> with log-probability 0, from its s_0:
// a row of the next step, after the rows of the sentences already in the search.
template <class T>
size_t BeamSearch<T>::add(const std::vector<std::vector<int>>& sources, const Steerings* steering,
                          const std::vector<uint64_t>* keys) {
  const size_t first_id = next_id_;
  if (sources.empty()) return first_id;
  if (keys && keys->size() != sources.size()) throw std::logic_error("beam search: one key per source");
  if (steering) {
    if (steering->size() != sources.size()) throw std::logic_error("beam search: one steering per source");
    for (const Steering& one : *steering) {
      check_sentence_steering(one);
      if (!one.constraints.include.empty()) check_constraints_allowed(options_);  // (the shells check first)
    }
  }
  encode(sources);
  const Index B = static_cast<Index>(sources.size()), S = members_.front().encoder.max_len;
  std::vector<int> slots;
  for (int b = 0; b < static_cast<int>(sentences_.size()) && static_cast<Index>(slots.size()) < B; ++b)
    if (sentences_[b].live.empty()) slots.push_back(b);
  while (static_cast<Index>(slots.size()) < B) {
    slots.push_back(static_cast<int>(sentences_.size()));
    sentences_.emplace_back();
  }
  slot_lengths_.resize(sentences_.size());
  reserve_memory(static_cast<Index>(sentences_.size()), S);
  const Index R = static_cast<Index>(row_sentence_.size());
  for (Member& m : members_) {
    const Index width = m.params->config().state_width();
    if (m.s_prev.rows() < R + B || m.s_prev.cols() != width) {  // grow, keeping the rows of the next step
      Mat<T> grown(std::max(R + B, 2 * m.s_prev.rows()), width);
      if (R > 0) grown.topRows(R) = m.s_prev.topRows(R);
      m.s_prev.swap(grown);
    }
    decoder_start_states<T>(m.params->config(), m.encoder.s0.topRows(B), m.s_prev.middleRows(R, B));
    for (Index i = 0; i < B; ++i) {
      const Index b = slots[i], len = lengths_[i];
      m.annotations.middleRows(b * stride_, len) = m.encoder.annotations.middleRows(i * S, len);
      m.keys.middleRows(b * stride_, len) = m.encoder.keys.middleRows(i * S, len);
    }
  }
  for (Index i = 0; i < B; ++i) {
    const int b = slots[i];
    Sentence& s = sentences_[b];
    s.id = next_id_++;
    s.key = keys ? (*keys)[i] : s.id;
    s.source_length = slot_lengths_[b] = lengths_[i];
    s.max_steps = options_.max_output_length > 0 ? options_.max_output_length
                                                 : max_output_length(lengths_[i], options_.max_length_factor);
    if (steering) {
      s.prefix = (*steering)[i].prefix;
      s.constraints = (*steering)[i].constraints;
    } else {
      s.prefix.clear();
      s.constraints = PhraseConstraints();
    }
    s.max_steps = std::max(s.max_steps, static_cast<int>(s.prefix.size()) + s.constraints.tokens() + 1);
    s.avoid.set(s.constraints.avoid, word_join_.empty() ? nullptr : &piece_text_);
    s.steps = 0;
    s.closing = false;
    s.nodes.clear();
    s.attention.clear();
    s.live.assign(1, Live{-1, T(0), -1, -1, {}});
    s.finals.clear();
    s.alternative_log_probs.clear();
    order_.push_back(b);
    row_sentence_.push_back(b);
    y_prev_.push_back(Vocab::kBos);
  }
  return first_id;
}

template <class T>
std::vector<typename BeamSearch<T>::Finished> BeamSearch<T>::step() {
  std::vector<Finished> finished;
  const Index rows = static_cast<Index>(row_sentence_.size());
  if (rows == 0) return finished;
  run_models(rows);
  row_sentence_.clear();
  y_prev_.clear();
  parent_rows_.clear();
  // Row order of a step: sentence by sentence (order_), each sentence's live hypotheses in order.
  int first_row = 0;
  size_t kept = 0;
  for (const int b : order_) {
    Sentence& s = sentences_[b];
    const int live = static_cast<int>(s.live.size());
    extend(b, first_row);
    first_row += live;
    if (s.live.empty())
      finished.push_back({s.id, best_hypotheses(s)});
    else
      order_[kept++] = b;
  }
  order_.resize(kept);
  gather_states();
  return finished;
}

// The next step's rows are sentence by sentence (order_), live.size() rows each: the rows
// of the sentences removed go, those of the others move up, in one pass.
template <class T>
size_t BeamSearch<T>::remove(const std::vector<size_t>& ids) {
  size_t kept = 0;
  Index from = 0, to = 0;  // rows
  for (const int b : order_) {
    Sentence& s = sentences_[b];
    const Index count = static_cast<Index>(s.live.size());
    if (std::find(ids.begin(), ids.end(), s.id) != ids.end()) {
      s.live.clear();
    } else {
      if (to != from)  // rows from .. from + count - 1 move up to to ..
        for (Index r = 0; r < count; ++r) {
          for (Member& m : members_) m.s_prev.row(to + r) = m.s_prev.row(from + r);
          row_sentence_[to + r] = row_sentence_[from + r];
          y_prev_[to + r] = y_prev_[from + r];
        }
      to += count;
      order_[kept++] = b;
    }
    from += count;
  }
  const size_t removed = order_.size() - kept;
  order_.resize(kept);
  row_sentence_.resize(to);
  y_prev_.resize(to);
  return removed;
}

// Sentence b's live hypotheses are rows first_row.. of the step just taken.
template <class T>
void BeamSearch<T>::extend(int b, int first_row) {
  Sentence& s = sentences_[b];
  if (s.closing) {
    close(s, first_row);
    return;
  }
  const bool word_start =
      !s.prefix.empty() && static_cast<size_t>(s.steps) == s.prefix.size() && !word_join_.empty();
  block_tokens(s, first_row);
  const size_t count = static_cast<size_t>(options_.beam_size) - s.finals.size();
  if (static_cast<size_t>(s.steps) < s.prefix.size())
    force_candidate(s, first_row, s.prefix[s.steps]);
  else if (options_.samples())
    lane_candidates(s, first_row, word_start);
  else if (options_.alternatives > 0)
    alternative_candidates(s, first_row, word_start);
  else if (!s.constraints.include.empty())
    constrained_candidates(s, first_row, count, word_start);
  else
    select_candidates(s, first_row, count, word_start);
  ++s.steps;
  s.next.clear();
  for (const Candidate& c : heap_) {
    const Live& parent = s.live[c.row - first_row];
    const int node = add_node(s, parent.node, c.word, c.row);
    if (c.word == Vocab::kEos) {
      finish(s, node, c.log_prob, s.steps, true, c.lane, parent.constraint);
    } else {
      const ConstraintState state = s.constraints.include.empty()
                                        ? parent.constraint
                                        : advance_constraints(s.constraints, parent.constraint, c.word, word_join_);
      s.next.push_back({node, c.log_prob, c.row, c.lane, state});
    }
  }
  std::swap(s.live, s.next);
  if (!s.live.empty() && s.steps == s.max_steps) {
    // The length limit: the unfinished hypotheses are final. With alignments they take one
    // more decoder step first, for the attention row that stands where </s> would.
    if (options_.alignment) {
      s.closing = true;
    } else {
      for (const Live& h : s.live)
        finish(s, h.node, h.log_prob, s.steps, false, h.lane, h.constraint);
      s.live.clear();
    }
  }
  queue_rows(b);
}

template <class T>
void BeamSearch<T>::close(Sentence& s, int first_row) {
  for (size_t i = 0; i < s.live.size(); ++i) {
    const int node = add_node(s, s.live[i].node, -1, first_row + static_cast<int>(i));
    finish(s, node, s.live[i].log_prob, s.steps, false, s.live[i].lane, s.live[i].constraint);
  }
  s.live.clear();
}

// The best `count` candidates (h, w), by σ_h + log p(w | h), of the sentence's rows
// (top_candidates.h). word_start: only tokens that begin a word (set_word_pieces).
template <class T>
void BeamSearch<T>::select_candidates(const Sentence& s, int first_row, size_t count, bool word_start) {
  bases_.clear();
  for (const Live& h : s.live) bases_.push_back(h.log_prob);
  top_candidates(*log_probs_, shortlist_, first_row, bases_, count, TokenFilter{word_join_, blocked_, word_start}, heap_);
}

// Within the target prefix the sentence has one hypothesis (row first_row), extended by the
// prefix's next word alone.
template <class T>
void BeamSearch<T>::force_candidate(const Sentence& s, int first_row, int word) {
  int column = word;
  if (shortlist_) {
    const auto found = std::lower_bound(shortlist_->begin(), shortlist_->end(), word);
    if (found == shortlist_->end() || *found != word)
      throw std::logic_error("beam search: a target prefix's token is not in the shortlist");
    column = static_cast<int>(found - shortlist_->begin());
  }
  heap_.assign(1, {s.live.front().log_prob + (*log_probs_)(first_row, column), first_row, word});
}

// The tokens this step must not propose: </s> after a hypothesis that lacks a constraint
// (constrained_search.h), and what would complete a phrase to avoid (avoided_phrases.h).
template <class T>
void BeamSearch<T>::block_tokens(const Sentence& s, int first_row) {
  blocked_.clear();
  if (!s.constraints.include.empty()) block_incomplete(s, first_row);
  if (s.constraints.avoid.empty()) return;
  const std::vector<std::string>* pieces = word_join_.empty() ? nullptr : &piece_text_;
  const bool chosen = static_cast<size_t>(s.steps) > s.prefix.size();
  const bool last = s.steps + 1 == s.max_steps && static_cast<size_t>(s.steps) >= s.prefix.size();
  for (size_t i = 0; i < s.live.size(); ++i)
    s.avoid.block(s.nodes, s.live[i].node, first_row + static_cast<int>(i), chosen, last, pieces, blocked_);
}

// A node's attention row is that of the decoder row it was chosen from.
template <class T>
int BeamSearch<T>::add_node(Sentence& s, int parent, int token, int row) {
  s.nodes.push_back({parent, token});
  if (collect_attention()) {
    const auto alpha = alpha_->row(row).head(s.source_length);
    for (Index j = 0; j < alpha.size(); ++j) s.attention.push_back(static_cast<float>(alpha(j)));
  }
  return static_cast<int>(s.nodes.size()) - 1;
}

template <class T>
void BeamSearch<T>::finish(Sentence& s, int node, T log_prob, int length, bool finished, int lane,
                           const ConstraintState& constraint) {
  const double log_p = static_cast<double>(log_prob);
  const double cover = options_.coverage_penalty > 0 ? coverage(s, node) : 0;
  s.finals.push_back({node, log_p, ranking_score(options_, log_p, length, cover), finished, lane, constraint.complete,
                      all_complete(s.constraints, constraint)});
}

// coverage_term of the attention rows of the node's path's tokens (not the extra row of a
// hypothesis cut at the length limit, which only alignments show).
template <class T>
double BeamSearch<T>::coverage(const Sentence& s, int node) const {
  std::vector<double>& sums = coverage_sums_;
  sums.assign(static_cast<size_t>(s.source_length), 0.0);
  for (; node >= 0; node = s.nodes[node].parent) {
    if (s.nodes[node].token < 0) continue;
    const float* row = s.attention.data() + static_cast<long>(node) * s.source_length;
    for (int j = 0; j < s.source_length; ++j) sums[j] += row[j];
  }
  return coverage_term(sums);
}

template <class T>
void BeamSearch<T>::queue_rows(int b) {
  for (const Live& h : sentences_[b].live) {
    row_sentence_.push_back(b);
    y_prev_.push_back(sentences_[b].nodes[h.node].token);
    parent_rows_.push_back(h.parent_row);
  }
}

// The next step continues the states of the surviving hypotheses: s_prev[r] = s[parent(r)].
template <class T>
Index BeamSearch<T>::gather_states() {
  const Index rows = static_cast<Index>(parent_rows_.size());
  for (Member& m : members_) {
    auto s_prev = rows_of(m.s_prev, rows, m.params->config().state_width());
    for (Index r = 0; r < rows; ++r) s_prev.row(r) = m.step.states.row(parent_rows_[r]);
  }
  return rows;
}

template <class T>
std::vector<Hypothesis> BeamSearch<T>::best_hypotheses(const Sentence& s) const {
  std::vector<size_t> order(s.finals.size());
  std::iota(order.begin(), order.end(), 0);
  if (options_.alternatives > 0)  // in the order of their first token
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s.finals[a].lane < s.finals[b].lane; });
  else  // those that hold every constraint first
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const Final &x = s.finals[a], &y = s.finals[b];
      return x.satisfied != y.satisfied ? x.satisfied : x.score > y.score;
    });
  // with constraints: those that hold them all, when any does
  while (order.size() > 1 && !s.finals[order.back()].satisfied && s.finals[order.front()].satisfied) order.pop_back();
  order.resize(std::min(order.size(), static_cast<size_t>(outputs())));
  std::vector<Hypothesis> best;
  for (size_t k : order) {
    const Final& f = s.finals[k];
    std::vector<int> path;  // root to leaf
    for (int node = f.node; node >= 0; node = s.nodes[node].parent) path.push_back(node);
    std::reverse(path.begin(), path.end());
    Hypothesis h;
    h.finished = f.finished;
    h.log_prob = f.log_prob;
    h.score = f.score;
    h.constraints_met = f.met;
    if (options_.alternatives > 0) {
      h.alternative = static_cast<int>(s.prefix.size());
      h.alternative_log_prob = static_cast<double>(s.alternative_log_probs[f.lane]);
    }
    for (int node : path)
      if (s.nodes[node].token >= 0 && s.nodes[node].token != Vocab::kEos) h.tokens.push_back(s.nodes[node].token);
    if (options_.alignment) {  // (attention collected for the coverage penalty alone is not returned)
      h.alignment.rows = static_cast<int>(path.size());
      h.alignment.cols = s.source_length;
      for (int node : path) {
        const auto row = s.attention.begin() + static_cast<long>(node) * s.source_length;
        h.alignment.weights.insert(h.alignment.weights.end(), row, row + s.source_length);
      }
    }
    best.push_back(std::move(h));
  }
  return best;
}

template class BeamSearch<float>;
template class BeamSearch<double>;

}  // namespace rnnsearch
