#include "rnnsearch/decode/decode_options.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>
#include <utility>

#include "rnnsearch/decode/scorer.h"
#include "rnnsearch/error.h"

namespace rnnsearch {

namespace {

constexpr double kNone = std::numeric_limits<double>::infinity();
constexpr double kIntMax = INT_MAX;
constexpr unsigned kTranslate = static_cast<unsigned>(DecodeUse::translate);
constexpr unsigned kBoth = kTranslate | static_cast<unsigned>(DecodeUse::score);

// A value as an error message shows it: whole numbers without a fraction.
std::string number_text(double value) {
  std::ostringstream text;
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15)
    text << static_cast<long long>(value);
  else
    text << value;
  return text.str();
}

// The sampling options' refusal without sampling (CTranslate2 ignores them there).
std::string sampling_only(const std::string& name) {
  return "--" + name + " goes with sampling: --sampling-topk 0 (the whole distribution) or K > 1" +
         (name == "sampling-topp" ? " (--sampling-topp alone no longer samples)" : "");
}

[[noreturn]] void refuse(const DecodeOptionSpec& spec, const std::string& requirement, double value) {
  throw Error(std::string("--") + spec.name + " must be " + requirement + ", not " + number_text(value));
}

}  // namespace

const std::vector<DecodeOptionSpec>& decode_option_specs() {
  static const std::vector<DecodeOptionSpec> specs = {
      {"beam-size", 'b', true, 1, kIntMax, false, kTranslate,
       "beam size; 1 = greedy decoding", &BeamOptions::beam_size},
      {"n-best", 0, true, 0, kIntMax, false, kTranslate,
       "the K best translations of each sentence, best first (K <= beam size; 0 = the 1-best alone); translate "
       "prints them as 'i ||| translation[ ||| alignment] ||| score'",
       &BeamOptions::n_best},
      {"normalize", 'n', false, 0, kNone, false, kBoth,
       "rank by log-probability / length^X (length counts </s>); score's default 0 ranks by log-probability",
       &BeamOptions::normalize},
      {"word-penalty", 0, false, -kNone, kNone, false, kBoth,
       "subtract W × output length from each hypothesis' score (as Marian's; < 0 favours longer output)",
       &BeamOptions::word_penalty},
      {"length-penalty-alpha", 0, false, 0, kNone, true, kBoth,
       "rank by log-probability / ((5 + length) / 6)^A (GNMT's length penalty) instead of normalize",
       &BeamOptions::length_penalty_alpha},
      {"coverage-penalty", 0, false, 0, kNone, false, kBoth,
       "add B × Σ_j log min(attention of source word j summed over the output, 1) to the score (GNMT's)",
       &BeamOptions::coverage_penalty},
      {"max-length-factor", 0, false, 0, kNone, false, kTranslate,
       "output at most F × source tokens (both counting </s>); 0 = 2 × source + 10",
       &BeamOptions::max_length_factor},
      {"sampling-topk", 0, true, 0, kIntMax, false, kTranslate,
       "as CTranslate2's sampling_topk: 1 = no sampling (beam search); 0 = sample each next token from the "
       "whole distribution; K > 1 = among the K most probable; --n-best K gives K samples",
       &BeamOptions::sampling_topk},
      {"sampling-topp", 0, false, 0.01, 1, false, kTranslate,
       "as CTranslate2's sampling_topp: with sampling (--sampling-topk 0 or K > 1), draw among the fewest most "
       "probable tokens whose probability sums to at least P; 1 = no filter",
       &BeamOptions::sampling_topp},
      {"sampling-temperature", 0, false, 0.01, 100, false, kTranslate,
       "with sampling: draw from p^(1/T) (< 1 sharper, > 1 flatter)", &BeamOptions::sampling_temperature},
      {"sampling-seed", 0, true, 0, kIntMax, false, kTranslate,
       "with sampling: the seed; the same seed gives the same samples at any thread count and batch size",
       &BeamOptions::sampling_seed},
      {"raw-attention", 0, true, 0, 1, false, kBoth,
       "1: alignments and heatmaps show the decoder's attention (where it looked before choosing each word) even "
       "when the model has an alignment output, which they show by default",
       &BeamOptions::raw_attention},
      {"alternatives", 0, true, 0, kIntMax, false, kTranslate,
       "the K most probable next words after the target prefix (or first words, without one), best first, "
       "each with its probability and the translation completed greedily from it; translate prints them as "
       "'i ||| translation[ ||| alignment] ||| score ||| word probability'",
       &BeamOptions::alternatives},
      {"batch-invariant", 0, true, 0, 1, false, kBoth,
       "1: each sentence's output (words, scores, alignments, samples) is bitwise the same whatever it is "
       "batched with, at any batch size, thread count or server load; 0: faster (docs/benchmarks.md), the "
       "last bits of scores depend on the batch",
       &BeamOptions::batch_invariant},
  };
  static_assert(sizeof(unsigned long) * CHAR_BIT >= 32, "DecodeOptions::given_ has a bit per option");
  return specs;
}

std::string DecodeOptionSpec::keyword() const {
  std::string keyword = name;
  for (char& c : keyword)
    if (c == '-') c = '_';
  return keyword;
}

double DecodeOptionSpec::value(const BeamOptions& options) const {
  return std::visit([&](auto member) { return static_cast<double>(options.*member); }, field);
}

double DecodeOptionSpec::default_value(DecodeUse use) const {
  return value(use == DecodeUse::score ? log_prob_ranking() : BeamOptions{});
}

void DecodeOptionSpec::check(double value) const {
  if (!std::isfinite(value))
    refuse(*this, integer ? "a whole number" : std::isfinite(minimum) ? "a number >= " + number_text(minimum) : "a finite number",
           value);
  if (integer && value != std::floor(value)) refuse(*this, "a whole number", value);
  if (value < minimum)
    refuse(*this, integer ? "at least " + number_text(minimum) : "a number >= " + number_text(minimum), value);
  if (value > maximum) refuse(*this, "at most " + number_text(maximum), value);
}

const DecodeOptionSpec* find_decode_option(std::string_view name) {
  // name equals spec.name with each '-' given as '-' or as '_' throughout (not mixed), compared
  // without building keyword(): set() and given() run this for every option of a request
  const auto spelt = [&](const char* option, char dash) {
    size_t k = 0;
    for (; option[k] != '\0'; ++k)
      if (k == name.size() || name[k] != (option[k] == '-' ? dash : option[k])) return false;
    return k == name.size();
  };
  for (const DecodeOptionSpec& spec : decode_option_specs())
    if (spelt(spec.name, '-') || spelt(spec.name, '_')) return &spec;
  return nullptr;
}

DecodeOptions::DecodeOptions(DecodeUse use) : use(use), beam(use == DecodeUse::score ? log_prob_ranking() : BeamOptions{}) {}

void DecodeOptions::set(std::string_view name, double value) {
  const DecodeOptionSpec* spec = find_decode_option(name);
  if (!spec || !spec->takes(use)) throw Error("unknown option '" + std::string(name) + "'");
  spec->check(value);
  std::visit(
      [&](auto member) { beam.*member = static_cast<std::remove_reference_t<decltype(beam.*member)>>(value); },
      spec->field);
  given_ |= 1ul << (spec - decode_option_specs().data());
}

bool DecodeOptions::given(std::string_view name) const {
  const DecodeOptionSpec* spec = find_decode_option(name);
  return spec && (given_ >> (spec - decode_option_specs().data()) & 1);
}

void DecodeOptions::validate(int max_beam_size) const {
  if (given("normalize") && given("length-penalty-alpha"))
    throw Error("--length-penalty-alpha and --normalize both rank by length: give one");
  // (--sampling-topp first: until 2026-12-07 it sampled alone, and its message says so)
  for (const char* name : {"sampling-topp", "sampling-temperature", "sampling-seed"})
    if (given(name) && !beam.samples()) throw Error(sampling_only(name));
  check_beam_options(beam);
  for (const auto& [name, value] : {std::pair{"beam-size", beam.beam_size}, std::pair{"n-best", beam.n_best},
                                    std::pair{"alternatives", beam.alternatives}})
    if (value > max_beam_size)
      throw Error(std::string("--") + name + " must be at most " + std::to_string(max_beam_size) +
                  " (the server's --max-beam-size), not " + std::to_string(value));
}

DecodeOptions given_decode_options(DecodeUse use, const std::function<std::optional<double>(const DecodeOptionSpec&)>& given,
                                   int max_beam_size) {
  DecodeOptions options(use);
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    if (!spec.takes(use)) continue;
    if (const std::optional<double> value = given(spec)) options.set(spec.name, *value);
  }
  options.validate(max_beam_size);
  return options;
}

void check_beam_options(const BeamOptions& options) {
  for (const DecodeOptionSpec& spec : decode_option_specs())
    if (!(spec.optional && spec.value(options) < 0)) spec.check(spec.value(options));  // < 0: off
  if (options.sampling_topp < 1 && !options.samples()) throw Error(sampling_only("sampling-topp"));
  if (options.alternatives > 0 && options.samples())
    throw Error("--alternatives and sampling (--sampling-topk other than 1) do not combine: give one");
  if (options.alternatives > 0 && options.n_best > 0)
    throw Error("--alternatives K gives K translations of each sentence: drop --n-best");
  if (options.n_best > options.beam_size && !options.samples())  // sampling: n_best samples, no beam
    throw Error("--n-best must be at most --beam-size (" + std::to_string(options.beam_size) + "), not " +
                std::to_string(options.n_best));
  if (options.max_output_length < 0) throw Error("the maximum output length must not be negative");
}

}  // namespace rnnsearch
