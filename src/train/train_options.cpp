#include "rnnsearch/train/train_options.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "rnnsearch/error.h"
#include "rnnsearch/model/guided_alignment.h"
#include "rnnsearch/util/checks.h"

namespace rnnsearch {

namespace {

using Type = TrainOptionType;
using Check = TrainCheck;
using Section = ConfigSection;
using Json = nlohmann::json;

constexpr Type kFlag = Type::flag, kInt = Type::integer, kLong = Type::long_integer, kUnsigned = Type::unsigned_integer,
               kReal = Type::real, kText = Type::text;
constexpr Section kModel = Section::model, kTraining = Section::training, kNowhere = Section::none;
constexpr OnResume kMayChange = OnResume::may_change, kKeep = OnResume::model;

// An entry's apply (SET: the value as it is; SET_NOT: a flag's opposite) and recorded (RECORD)
#define SET(type, field) [](TrainOptions& o, const TrainOptionValue& v) { o.field = std::get<type>(v); }
#define SET_NOT(field) [](TrainOptions& o, const TrainOptionValue& v) { o.field = !std::get<bool>(v); }
#define RECORD(expr) [](const TrainOptions& o) -> Json { return expr; }

}  // namespace

// (the sizes --preset gives, the names read by parse_* and the options that need another are
// read by read_train_options: apply null)
const std::vector<TrainOptionSpec>& train_option_specs() {
  static const std::vector<TrainOptionSpec> specs = {
      {"train-src", 0, kText, nullptr, true, Check::none, 0, 0, "training source text (plain or .gz)",
       kTraining, "train_src", false, kMayChange, SET(std::string, train_src), RECORD(o.train_src)},
      {"train-tgt", 0, kText, nullptr, true, Check::none, 0, 0, "training target text",
       kTraining, "train_tgt", false, kMayChange, SET(std::string, train_tgt), RECORD(o.train_tgt)},
      {"valid-src", 0, kText, nullptr, true, Check::none, 0, 0, "validation source text",
       kTraining, "valid_src", false, kMayChange, SET(std::string, valid_src), RECORD(o.valid_src)},
      {"valid-tgt", 0, kText, nullptr, true, Check::none, 0, 0, "validation target text",
       kTraining, "valid_tgt", false, kMayChange, SET(std::string, valid_tgt), RECORD(o.valid_tgt)},
      {"model", 'm', kText, nullptr, true, Check::none, 0, 0, "model directory (created; an existing run there resumes)",
       kNowhere, nullptr, false, kMayChange, SET(std::string, model_dir), nullptr},
      {"preset", 0, kText, "small", false, Check::none, 0, 0,
       "sizes: small (e128 n256 l256 batch 64) or base (e256 n512 l500 batch 80)",
       kNowhere, nullptr, false, kKeep, nullptr, nullptr},  // its sizes are --emb, --hidden, --maxout's
      {"emb", 0, kInt, nullptr, false, Check::at_least, 1, 0, "embedding size e (overrides the preset)",
       kModel, "emb", false, kKeep, SET(int, model.emb), RECORD(o.model.emb)},
      {"hidden", 0, kInt, nullptr, false, Check::at_least, 1, 0, "hidden size n (overrides the preset)",
       kModel, "hidden", false, kKeep, SET(int, model.hidden), RECORD(o.model.hidden)},
      {"maxout", 0, kInt, nullptr, false, Check::at_least, 1, 0, "maxout units l (overrides the preset)",
       kModel, "maxout", false, kKeep, SET(int, model.maxout), RECORD(o.model.maxout)},
      {"output-layer", 0, kText, "maxout", false, Check::none, 0, 0, "maxout (the paper's deep output) or linear",
       kModel, "output_layer", false, kKeep, nullptr, RECORD(output_kind_name(o.model.output))},
      {"tied-embeddings", 0, kFlag, nullptr, false, Check::none, 0, 0,
       "use the target embeddings as the output projection (tgt_embᵀ for out_Wo; needs --maxout = --emb)",
       kModel, "tied_embeddings", false, kKeep, SET(bool, model.tied_embeddings), RECORD(o.model.tied_embeddings)},
      {"layer-normalization", 0, kFlag, nullptr, false, Check::none, 0, 0,
       "normalise every product into a GRU's gates, each with its own gain and bias (as Nematus)",
       kModel, "layer_normalization", false, kKeep, SET(bool, model.layer_norm), RECORD(o.model.layer_norm)},
      {"enc-cell-depth", 0, kInt, "1", false, Check::between, 1, kMaxCellDepth,
       "GRU transitions per position in each encoder direction (deep transition, as Marian's s2s; 1 = the paper's)",
       kModel, "enc_cell_depth", false, kKeep, SET(int, model.enc_cell_depth), RECORD(o.model.enc_cell_depth)},
      {"dec-cell-base-depth", 0, kInt, "1", false, Check::between, 1, kMaxCellDepth,
       "1: the paper's decoder; B >= 2: the conditional GRU of Nematus and Marian's s2s with B cells (attention after "
       "the first)",
       kModel, "dec_cell_base_depth", false, kKeep, SET(int, model.dec_cell_base_depth),
       RECORD(o.model.dec_cell_base_depth)},
      {"enc-depth", 0, kInt, "1", false, Check::between, 1, kMaxDepth,
       "stacked GRU layers in each encoder direction (as Marian's s2s --enc-depth)",
       kModel, "enc_depth", false, kKeep, SET(int, model.enc_depth), RECORD(o.model.enc_depth)},
      {"enc-type", 0, kText, "bidirectional", false, Check::none, 0, 0,
       "the stacked encoder layers: bidirectional (a forward and a backward stack) or alternating (each stack flips "
       "direction at every layer, as Marian's s2s and Nematus)",
       kModel, "enc_type", false, kKeep, nullptr, RECORD(encoder_type_name(o.model.enc_type))},
      {"dec-depth", 0, kInt, "1", false, Check::between, 1, kMaxDepth,
       "stacked decoder layers over the conditional GRU (as Marian's s2s --dec-depth), each with a state of its own",
       kModel, "dec_depth", false, kKeep, SET(int, model.dec_depth), RECORD(o.model.dec_depth)},
      {"dec-cell-high-depth", 0, kInt, "1", false, Check::between, 1, kMaxCellDepth,
       "GRU transitions per step in each decoder layer from the second on (deep transition)",
       kModel, "dec_cell_high_depth", false, kKeep, SET(int, model.dec_cell_high_depth),
       RECORD(o.model.dec_cell_high_depth)},
      {"skip", 0, kFlag, nullptr, false, Check::none, 0, 0,
       "residual connections: encoder and decoder layers from the second on add their input to their output",
       kModel, "skip", false, kKeep, SET(bool, model.skip), RECORD(o.model.skip)},
      {"batch-size", 0, kInt, nullptr, false, Check::at_least, 1, 0, "sentences per batch (overrides the preset)",
       kTraining, "batch_size", false, kMayChange, SET(int, batch_size), RECORD(o.batch_size)},
      {"optimizer", 0, kText, "adam", false, Check::none, 0, 0, "adam or sgd",
       kTraining, "optimizer", false, kMayChange, nullptr,
       RECORD(o.optimizer.kind == OptimizerKind::adam ? "adam" : "sgd")},
      {"lr", 0, kReal, "0.001", false, Check::non_negative, 0, 0, "learning rate",
       kTraining, "lr", false, kMayChange, SET(double, optimizer.lr), RECORD(o.optimizer.lr)},
      {"lr-warmup", 0, kLong, "0", false, Check::at_least, 0, 0, "raise the rate linearly over the first N updates (0 = off)",
       kNowhere, nullptr, false, kMayChange, SET(long, lr_schedule.warmup), nullptr},
      {"lr-decay-inv-sqrt", 0, kLong, "0", false, Check::at_least, 0, 0, "from update N on, rate x sqrt(N / update) (0 = off)",
       kNowhere, nullptr, false, kMayChange, SET(long, lr_schedule.inv_sqrt), nullptr},
      {"lr-decay", 0, kReal, "0", false, Check::below_one, 0, 0,
       "multiply the rate by this after --lr-decay-stalled validations in a row without improvement (0 = off)",
       kNowhere, nullptr, false, kMayChange, SET(double, lr_schedule.decay), nullptr},
      {"lr-decay-stalled", 0, kInt, "1", false, Check::at_least, 1, 0,
       "validations without improvement that decay the rate (again after as many more)",
       kNowhere, nullptr, false, kMayChange, SET(int, lr_schedule.decay_stalled), nullptr},
      {"clip-norm", 0, kReal, "1", false, Check::non_negative, 0, 0, "global gradient-norm clipping (0 = off)",
       kTraining, "clip_norm", false, kMayChange, SET(double, clip_norm), RECORD(o.clip_norm)},
      {"dropout", 0, kReal, "0", false, Check::below_one, 0, 0, "dropout rate of both --dropout-embeddings and --dropout-output",
       kNowhere, nullptr, false, kMayChange, nullptr, nullptr},  // recorded as both
      {"dropout-embeddings", 0, kReal, nullptr, false, Check::below_one, 0, 0,
       "dropout on the source and target embeddings where they enter the GRUs (default: --dropout)",
       kTraining, "embedding_dropout", false, kMayChange, SET(double, regularization.embedding_dropout),
       RECORD(o.regularization.embedding_dropout)},
      {"dropout-output", 0, kReal, nullptr, false, Check::below_one, 0, 0,
       "dropout on the output layer's input [s, E, c] (default: --dropout)",
       kTraining, "output_dropout", false, kMayChange, SET(double, regularization.output_dropout),
       RECORD(o.regularization.output_dropout)},
      {"dropout-src", 0, kReal, "0", false, Check::below_one, 0, 0,
       "word dropout: each source token's embedding is zero with this probability (each token of each sentence on its "
       "own)",
       kTraining, "source_word_dropout", false, kMayChange, SET(double, regularization.source_word_dropout),
       RECORD(o.regularization.source_word_dropout)},
      {"dropout-trg", 0, kReal, "0", false, Check::below_one, 0, 0,
       "word dropout: each previous target word's embedding is zero with this probability, where it enters the "
       "decoder and the output layer",
       kTraining, "target_word_dropout", false, kMayChange, SET(double, regularization.target_word_dropout),
       RECORD(o.regularization.target_word_dropout)},
      {"dropout-rnn", 0, kReal, "0", false, Check::below_one, 0, 0,
       "recurrent (variational) dropout: each GRU transition's state where it enters its recurrent products, one mask "
       "per sentence for every step (Marian's --dropout-rnn)",
       kTraining, "rnn_dropout", false, kMayChange, SET(double, regularization.rnn_dropout),
       RECORD(o.regularization.rnn_dropout)},
      {"label-smoothing", 0, kReal, "0", false, Check::below_one, 0, 0,
       "ε: train against (1-ε)·one-hot + ε·uniform (validation perplexity stays unsmoothed)",
       kTraining, "label_smoothing", false, kMayChange, SET(double, regularization.label_smoothing),
       RECORD(o.regularization.label_smoothing)},
      {"guided-alignment", 0, kText, nullptr, false, Check::none, 0, 0,
       "word links of the training pairs, one Pharaoh line 'i-j ...' (0-based source-target words) per pair, as "
       "fast_align, eflomal or `rnnsearch align` write them: the attention is trained towards them (guided alignment)",
       kTraining, "guided_alignment", false, kMayChange, SET(std::string, guided_alignment), RECORD(o.guided_alignment)},
      {"guided-alignment-weight", 0, kReal, "0.10000000000000001", false, Check::non_negative, 0, 0,
       "weight of the guided-alignment cost beside the translation cost",
       kTraining, "guided_alignment_weight", false, kMayChange, SET(double, regularization.guided_alignment),
       RECORD(o.regularization.guided_alignment)},
      {"guided-alignment-cost", 0, kText, "ce", false, Check::none, 0, 0,
       "ce (cross-entropy of the attention against the links) or mse",
       kTraining, "guided_alignment_cost", false, kMayChange, nullptr,
       RECORD(guided_alignment_cost_name(o.regularization.guided_alignment_cost))},
      {"alignment-output", 0, kInt, "0", false, Check::at_least, 0, 0,
       "N > 0: give the model an alignment output of N units, an attention that sees the word it aligns, trained "
       "on the --guided-alignment links instead of the attention; translations, scores and heatmaps then show it "
       "(0 = none: they show the attention)",
       kModel, "alignment_output", false, kKeep, SET(int, model.alignment_output), RECORD(o.model.alignment_output)},
      {"alignment-output-backprop", 0, kFlag, nullptr, false, Check::none, 0, 0,
       "let the alignment output's cost train the encoder and decoder too (by default only its own weights learn, "
       "and the translation model is as without it)",
       kTraining, "alignment_output_backprop", false, kMayChange, SET(bool, regularization.alignment_output_backprop),
       RECORD(o.regularization.alignment_output_backprop)},
      {"accumulate", 0, kInt, "1", false, Check::at_least, 1, 0,
       "batches per update: their gradients are averaged over all their target tokens (a larger effective batch "
       "in the memory of one, e.g. for many MPI ranks)",
       kNowhere, nullptr, false, kMayChange, SET(int, accumulate), nullptr},
      {"max-minutes", 0, kReal, "0", false, Check::non_negative, 0, 0, "training-time budget in minutes (0 = none)",
       kNowhere, nullptr, false, kMayChange, SET(double, max_minutes), nullptr},
      {"max-epochs", 0, kInt, "0", false, Check::at_least, 0, 0, "epochs (0 = no limit)",
       kNowhere, nullptr, false, kMayChange, SET(int, max_epochs), nullptr},
      {"max-updates", 0, kLong, "0", false, Check::at_least, 0, 0, "updates (0 = no limit)",
       kNowhere, nullptr, false, kMayChange, SET(long, max_updates), nullptr},
      {"valid-freq", 0, kLong, "0", false, Check::at_least, 0, 0,
       "validate and save every N updates, and at the end (0 = at each epoch end)",
       kNowhere, nullptr, false, kMayChange, SET(long, valid_freq), nullptr},
      {"save-freq", 0, kLong, "0", false, Check::at_least, 0, 0,
       "also save a checkpoint every N updates, without validating (0 = only when validating)",
       kNowhere, nullptr, false, kMayChange, SET(long, save_freq), nullptr},
      {"valid-metrics", 0, kText, "cross-entropy", false, Check::none, 0, 0,
       "cross-entropy, bleu and/or chrf, comma-separated: each is logged, the first selects model.best.npz and "
       "drives --patience",
       kNowhere, nullptr, false, kMayChange, nullptr, nullptr},
      {"valid-beam-size", 0, kInt, "5", false, Check::at_least, 1, 0,
       "beam size of the translations validation BLEU and chrF score",
       kNowhere, nullptr, false, kMayChange, SET(int, valid_beam_size), nullptr},
      {"exponential-smoothing", 0, kReal, "0", false, Check::below_one, 0, 0,
       "α: validate and save as model.best.npz the moving average of the weights, θ̄ += α(θ − θ̄) after each "
       "update (0 = off; 1e-3 suits a few thousand updates)",
       kNowhere, nullptr, false, kMayChange, SET(double, optimizer.smoothing), nullptr},
      {"patience", 0, kInt, "0", false, Check::at_least, 0, 0, "stop after N validations without improvement (0 = off)",
       kNowhere, nullptr, false, kMayChange, SET(int, patience), nullptr},
      {"seed", 0, kUnsigned, "1", false, Check::none, 0, 0, "random seed (initialisation, data order, dropout)",
       kTraining, "seed", false, kMayChange, SET(unsigned long, seed), RECORD(o.seed)},
      {"no-shuffle", 0, kFlag, nullptr, false, Check::none, 0, 0, "train in corpus order",
       kTraining, "shuffle", true, kMayChange, SET_NOT(shuffle), RECORD(o.shuffle)},
      {"threads", 0, kInt, "0", false, Check::at_least, 0, 0,
       "threads (0, every command's default: OMP_NUM_THREADS when set, else one per core this process may run on)",
       kNowhere, nullptr, false, kMayChange, SET(int, threads), nullptr},
      {"precision", 0, kText, "auto", false, Check::none, 0, 0,
       "of the matrix products: fp32; bf16 with fp32 sums (CPUs with AVX512_BF16, elsewhere fp32); "
       "auto = bf16 where the CPU has it, else fp32",
       kNowhere, nullptr, false, kMayChange, nullptr, nullptr},
      {"vocab-src", 0, kText, nullptr, false, Check::none, 0, 0, "use this source vocabulary instead of building one",
       kNowhere, nullptr, false, OnResume::text, SET(std::string, vocab_src), nullptr},
      {"vocab-tgt", 0, kText, nullptr, false, Check::none, 0, 0, "use this target vocabulary instead of building one",
       kNowhere, nullptr, false, OnResume::text, SET(std::string, vocab_tgt), nullptr},
      {"min-count", 0, kInt, "2", false, Check::at_least, 1, 0, "vocabulary: keep tokens seen this often",
       kTraining, "min_count", false, OnResume::words, SET(int, min_count), RECORD(o.min_count)},
      {"subwords", 0, kInt, "0", false, Check::at_least, 0, 0,
       "learn SentencePiece subword units, about N per model, on the training text as --tokenizer gives it "
       "(0 = whole words)",
       kTraining, "subwords", false, OnResume::words_or_subwords, SET(int, subwords), RECORD(o.subwords)},
      {"subword-type", 0, kText, "bpe", false, Check::none, 0, 0, "bpe or unigram",
       kTraining, "subword_type", false, OnResume::subwords, nullptr, RECORD(subword_type_name(o.subword_type))},
      {"subwords-separate", 0, kFlag, nullptr, false, Check::none, 0, 0,
       "one subword model per language instead of one joint model",
       kTraining, "subwords_joint", true, OnResume::subwords, SET_NOT(subwords_joint), RECORD(o.subwords_joint)},
      {"subwords-sample", 0, kUnsigned, "2000000", false, Check::zero_or_above_100, 0, 0,
       "SentencePiece learns on a random sample of at most N training sentences (a joint model: of both sides "
       "together; 0 = every sentence)",
       kTraining, "subwords_sample", false, OnResume::subwords, SET(unsigned long, subwords_sample),
       RECORD(o.subwords_sample)},
      {"init-from", 0, kText, nullptr, false, Check::none, 0, 0,
       "start from the weights of this model.npz (shapes must match)",
       kNowhere, nullptr, false, kMayChange, SET(std::string, init_from), nullptr},
      {"max-length", 0, kUnsigned, "100", false, Check::at_least, 1, 0, "skip training pairs longer than this (tokens)",
       kTraining, "max_length", false, kMayChange, SET(unsigned long, max_length), RECORD(o.max_length)},
      {"no-corpus-cache", 0, kFlag, nullptr, false, Check::none, 0, 0,
       "read the training text into memory on every run instead of binarizing it once into corpus.bin in --model",
       kNowhere, nullptr, false, kMayChange, SET_NOT(corpus_cache), nullptr},
      {"log-freq", 0, kLong, "100", false, Check::at_least, 1, 0, "log line every N updates",
       kNowhere, nullptr, false, kMayChange, SET(long, log_freq), nullptr},
      {"resume", 0, kFlag, nullptr, false, Check::none, 0, 0, "require an existing run in --model to resume",
       kNowhere, nullptr, false, kMayChange, SET(bool, require_resume), nullptr},
      {"tokenizer", 0, kText, "words", false, Check::none, 0, 0,
       "words: lowercase (unless --no-lowercase) and split off punctuation, translations are such tokens; raw: "
       "the text as it is, cased, with --subwords learnt on the raw sentences, translations are raw text",
       kNowhere, nullptr, false, OnResume::text, nullptr, nullptr},  // config.json's "tokenizer"
      {"no-lowercase", 0, kFlag, nullptr, false, Check::none, 0, 0, "--tokenizer words: keep case",
       kNowhere, nullptr, false, OnResume::text, nullptr, nullptr},
      {"bench-seconds", 0, kReal, "0", false, Check::non_negative, 0, 0,
       "benchmark: after --bench-warmup updates, train this many seconds, print tgt_tok/s, exit without saving",
       kNowhere, nullptr, false, kMayChange, SET(double, bench_seconds), nullptr},
      {"bench-warmup", 0, kLong, "20", false, Check::at_least, 0, 0, "benchmark warm-up updates",
       kNowhere, nullptr, false, kMayChange, SET(long, bench_warmup), nullptr},
      {"profile", 0, kFlag, nullptr, false, Check::none, 0, 0,
       "report the time spent in each phase (encoder, attention, ...)",
       kNowhere, nullptr, false, kMayChange, SET(bool, profile), nullptr},
  };
  return specs;
}

#undef SET
#undef SET_NOT
#undef RECORD

TrainOptionValue TrainOptionSpec::default_value() const {
  if (type == Type::flag) return false;
  if (!default_text) throw std::logic_error(std::string("TrainOptionSpec: --") + name + " has no default");
  switch (type) {
    case Type::integer: return std::stoi(default_text);
    case Type::long_integer: return std::stol(default_text);
    case Type::unsigned_integer: return std::stoul(default_text);
    case Type::real: return std::stod(default_text);
    default: return std::string(default_text);
  }
}

void TrainOptionSpec::check(const TrainOptionValue& value) const {
  if (check_kind == Check::none) return;
  // a whole number as the checks read it (an unsigned one wraps, as it did into a long; a real
  // one beyond a long's range is clamped to it, NaN is 0: converting them is undefined), a real one
  const long whole = std::visit(
      [](const auto& v) -> long {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(v)) return 0;
          if (v >= 0x1p63) return std::numeric_limits<long>::max();
          if (v < -0x1p63) return std::numeric_limits<long>::min();
          return static_cast<long>(v);
        } else if constexpr (std::is_arithmetic_v<T>) {
          return static_cast<long>(v);
        }
        return 0;
      },
      value);
  const double real = std::holds_alternative<double>(value) ? std::get<double>(value) : static_cast<double>(whole);
  switch (check_kind) {
    case Check::at_least: return check_at_least(name, whole, minimum);
    case Check::between: return check_between(name, whole, minimum, maximum);
    case Check::non_negative: return check_non_negative(name, real);
    case Check::below_one: return check_below_one(name, real);
    case Check::zero_or_above_100:
      if (whole != 0 && whole <= 100) fail_check(name, "0 (every sentence) or more than 100", whole);
      return;
    case Check::none: return;
  }
}

std::string TrainOptionSpec::text(const Json& value) const {
  if (value.is_boolean()) return value.get<bool>() != negated ? "on" : "off";
  return value.is_string() ? value.get<std::string>() : value.dump();
}

const TrainOptionSpec* find_train_option(std::string_view name) {
  for (const TrainOptionSpec& spec : train_option_specs())
    if (name == spec.name) return &spec;
  return nullptr;
}

std::string model_option_text(const TrainOptionSpec& spec, const ModelConfig& config) {
  TrainOptions options;
  options.model = config;
  return spec.text(spec.recorded(options));
}

Json training_json(const TrainOptions& o) {
  Json record = Json::object();
  for (const TrainOptionSpec& spec : train_option_specs())
    if (spec.section == Section::training) record[spec.key] = spec.recorded(o);
  return record;
}

}  // namespace rnnsearch
