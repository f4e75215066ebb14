#include <iostream>
#include <optional>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "commands.h"
#include "rnnsearch/error.h"
#include "rnnsearch/train/trainer.h"
#include "rnnsearch/util/checks.h"
#include "rnnsearch/util/profile.h"

namespace po = boost::program_options;

namespace rnnsearch::cli {
namespace {

struct Preset {
  int emb, hidden, maxout, batch;
};

// docs/design.md §1: the same sizes as the PyTorch reference.
Preset preset_sizes(const std::string& name) {
  if (name == "small") return {128, 256, 256, 64};
  if (name == "base") return {256, 512, 500, 80};
  throw Error("unknown preset '" + name + "' (expected small or base)");
}

// Training's buffers of 1 MB and more (workspaces, logits, weights) get their own mappings,
// returned to the system when freed. glibc's default raises that threshold to the size of each
// large buffer freed, so once the workspaces had grown for a longer batch, later ones came from
// the heap and the old ones left holes in it that stayed resident, a part of a training run's
// peak memory; the speed is unchanged, as training maps few buffers in all. Not for decoding:
// oneDNN's int8 product allocates and frees a buffer just over 1 MB at every decoder step,
// which then got a fresh mapping, page faults and all, each time, slowing a lone sentence in
// the server. Both measured: docs/benchmarks.md, Memory.
void return_large_buffers_to_the_system() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
}

}  // namespace

std::optional<TrainOptions> parse_train_options(const Args& args) {
  TrainOptions o;
  std::string preset = "small", output_layer = "maxout", enc_type = "bidirectional", optimizer = "adam";
  int emb = 0, hidden = 0, maxout = 0, batch = 0, threads = 0;
  double dropout = 0;
  std::string subword_type, valid_metrics, precision, tokenizer, guided_alignment_cost;
  bool subwords_separate = false;
  bool no_shuffle = false, no_lowercase = false, profile_phases = false, no_corpus_cache = false;
  po::options_description options("train options");
  options.add_options()
      ("train-src", po::value(&o.train_src)->required(), "training source text (plain or .gz)")
      ("train-tgt", po::value(&o.train_tgt)->required(), "training target text")
      ("valid-src", po::value(&o.valid_src)->required(), "validation source text")
      ("valid-tgt", po::value(&o.valid_tgt)->required(), "validation target text")
      ("model,m", po::value(&o.model_dir)->required(), "model directory (created; an existing run there resumes)")
      ("preset", po::value(&preset)->default_value("small"), "sizes: small (e128 n256 l256 batch 64) or base (e256 n512 l500 batch 80)")
      ("emb", po::value(&emb)->notifier(at_least("emb", 1)), "embedding size e (overrides the preset)")
      ("hidden", po::value(&hidden)->notifier(at_least("hidden", 1)), "hidden size n (overrides the preset)")
      ("maxout", po::value(&maxout)->notifier(at_least("maxout", 1)), "maxout units l (overrides the preset)")
      ("output-layer", po::value(&output_layer)->default_value("maxout"), "maxout (the paper's deep output) or linear")
      ("tied-embeddings", po::bool_switch(&o.model.tied_embeddings),
       "use the target embeddings as the output projection (tgt_embᵀ for out_Wo; needs --maxout = --emb)")
      ("layer-normalization", po::bool_switch(&o.model.layer_norm),
       "normalise every product into a GRU's gates, each with its own gain and bias (as Nematus)")
      ("enc-cell-depth", po::value(&o.model.enc_cell_depth)->default_value(1)->notifier(between("enc-cell-depth", 1, kMaxCellDepth)),
       "GRU transitions per position in each encoder direction (deep transition, as Marian's s2s; 1 = the paper's)")
      ("dec-cell-base-depth", po::value(&o.model.dec_cell_base_depth)->default_value(1)->notifier(between("dec-cell-base-depth", 1, kMaxCellDepth)),
       "1: the paper's decoder; B >= 2: the conditional GRU of Nematus and Marian's s2s with B cells (attention after the first)")
      ("enc-depth", po::value(&o.model.enc_depth)->default_value(1)->notifier(between("enc-depth", 1, kMaxDepth)),
       "stacked GRU layers in each encoder direction (as Marian's s2s --enc-depth)")
      ("enc-type", po::value(&enc_type)->default_value("bidirectional"),
       "the stacked encoder layers: bidirectional (a forward and a backward stack) or alternating (each stack flips "
       "direction at every layer, as Marian's s2s and Nematus)")
      ("dec-depth", po::value(&o.model.dec_depth)->default_value(1)->notifier(between("dec-depth", 1, kMaxDepth)),
       "stacked decoder layers over the conditional GRU (as Marian's s2s --dec-depth), each with a state of its own")
      ("dec-cell-high-depth", po::value(&o.model.dec_cell_high_depth)->default_value(1)
           ->notifier(between("dec-cell-high-depth", 1, kMaxCellDepth)),
       "GRU transitions per step in each decoder layer from the second on (deep transition)")
      ("skip", po::bool_switch(&o.model.skip),
       "residual connections: encoder and decoder layers from the second on add their input to their output")
      ("batch-size", po::value(&batch)->notifier(at_least("batch-size", 1)), "sentences per batch (overrides the preset)")
      ("optimizer", po::value(&optimizer)->default_value("adam"), "adam or sgd")
      ("lr", po::value(&o.optimizer.lr)->default_value(1e-3)->notifier(non_negative("lr")), "learning rate")
      ("lr-warmup", po::value(&o.lr_schedule.warmup)->default_value(0)->notifier(at_least("lr-warmup", 0)),
       "raise the rate linearly over the first N updates (0 = off)")
      ("lr-decay-inv-sqrt", po::value(&o.lr_schedule.inv_sqrt)->default_value(0)->notifier(at_least("lr-decay-inv-sqrt", 0)),
       "from update N on, rate x sqrt(N / update) (0 = off)")
      ("lr-decay", po::value(&o.lr_schedule.decay)->default_value(0.0)->notifier(below_one("lr-decay")),
       "multiply the rate by this after --lr-decay-stalled validations in a row without improvement (0 = off)")
      ("lr-decay-stalled", po::value(&o.lr_schedule.decay_stalled)->default_value(1)->notifier(at_least("lr-decay-stalled", 1)),
       "validations without improvement that decay the rate (again after as many more)")
      ("clip-norm", po::value(&o.clip_norm)->default_value(1.0)->notifier(non_negative("clip-norm")), "global gradient-norm clipping (0 = off)")
      ("dropout", po::value(&dropout)->default_value(0.0)->notifier(below_one("dropout")),
       "dropout rate of both --dropout-embeddings and --dropout-output")
      ("dropout-embeddings", po::value(&o.regularization.embedding_dropout)->notifier(below_one("dropout-embeddings")),
       "dropout on the source and target embeddings where they enter the GRUs (default: --dropout)")
      ("dropout-output", po::value(&o.regularization.output_dropout)->notifier(below_one("dropout-output")),
       "dropout on the output layer's input [s, E, c] (default: --dropout)")
      ("dropout-src", po::value(&o.regularization.source_word_dropout)->default_value(0.0)->notifier(below_one("dropout-src")),
       "word dropout: each source token's embedding is zero with this probability (each token of each sentence on its own)")
      ("dropout-trg", po::value(&o.regularization.target_word_dropout)->default_value(0.0)->notifier(below_one("dropout-trg")),
       "word dropout: each previous target word's embedding is zero with this probability, where it enters the "
       "decoder and the output layer")
      ("dropout-rnn", po::value(&o.regularization.rnn_dropout)->default_value(0.0)->notifier(below_one("dropout-rnn")),
       "recurrent (variational) dropout: each GRU transition's state where it enters its recurrent products, one mask "
       "per sentence for every step (Marian's --dropout-rnn)")
      ("label-smoothing", po::value(&o.regularization.label_smoothing)->default_value(0.0)
           ->notifier(below_one("label-smoothing")),
       "ε: train against (1-ε)·one-hot + ε·uniform (validation perplexity stays unsmoothed)")
      ("guided-alignment", po::value(&o.guided_alignment),
       "word links of the training pairs, one Pharaoh line 'i-j ...' (0-based source-target words) per pair, as "
       "fast_align, eflomal or `rnnsearch align` write them: the attention is trained towards them (guided alignment)")
      ("guided-alignment-weight", po::value(&o.regularization.guided_alignment)->default_value(0.1)
           ->notifier(non_negative("guided-alignment-weight")),
       "weight of the guided-alignment cost beside the translation cost")
      ("guided-alignment-cost", po::value(&guided_alignment_cost)->default_value("ce"),
       "ce (cross-entropy of the attention against the links) or mse")
      ("alignment-output", po::value(&o.model.alignment_output)->default_value(0)->notifier(at_least("alignment-output", 0)),
       "N > 0: give the model an alignment output of N units, an attention that sees the word it aligns, trained "
       "on the --guided-alignment links instead of the attention; translations, scores and heatmaps then show it "
       "(0 = none: they show the attention)")
      ("alignment-output-backprop", po::bool_switch(&o.regularization.alignment_output_backprop),
       "let the alignment output's cost train the encoder and decoder too (by default only its own weights learn, "
       "and the translation model is as without it)")
      ("accumulate", po::value(&o.accumulate)->default_value(1)->notifier(at_least("accumulate", 1)),
       "batches per update: their gradients are averaged over all their target tokens (a larger effective batch "
       "in the memory of one, e.g. for many MPI ranks)")
      ("max-minutes", po::value(&o.max_minutes)->default_value(0)->notifier(non_negative("max-minutes")), "training-time budget in minutes (0 = none)")
      ("max-epochs", po::value(&o.max_epochs)->default_value(0)->notifier(at_least("max-epochs", 0)), "epochs (0 = no limit)")
      ("max-updates", po::value(&o.max_updates)->default_value(0)->notifier(at_least("max-updates", 0)), "updates (0 = no limit)")
      ("valid-freq", po::value(&o.valid_freq)->default_value(0)->notifier(at_least("valid-freq", 0)), "validate and save every N updates, and at the end (0 = at each epoch end)")
      ("save-freq", po::value(&o.save_freq)->default_value(0)->notifier(at_least("save-freq", 0)),
       "also save a checkpoint every N updates, without validating (0 = only when validating)")
      ("valid-metrics", po::value(&valid_metrics)->default_value("cross-entropy"),
       "cross-entropy, bleu and/or chrf, comma-separated: each is logged, the first selects model.best.npz and "
       "drives --patience")
      ("valid-beam-size", po::value(&o.valid_beam_size)->default_value(5)->notifier(at_least("valid-beam-size", 1)),
       "beam size of the translations validation BLEU and chrF score")
      ("exponential-smoothing", po::value(&o.optimizer.smoothing)->default_value(0.0)
           ->notifier(below_one("exponential-smoothing")),
       "α: validate and save as model.best.npz the moving average of the weights, θ̄ += α(θ − θ̄) after each "
       "update (0 = off; 1e-3 suits a few thousand updates)")
      ("patience", po::value(&o.patience)->default_value(0)->notifier(at_least("patience", 0)), "stop after N validations without improvement (0 = off)")
      ("seed", po::value(&o.seed)->default_value(1), "random seed (initialisation, data order, dropout)")
      ("no-shuffle", po::bool_switch(&no_shuffle), "train in corpus order")
      ("threads", po::value(&threads)->default_value(0)->notifier(at_least("threads", 0)), "threads (0, every command's default: OMP_NUM_THREADS when set, else one per core this process may run on)")
      ("precision", po::value(&precision)->default_value("auto"),
       "of the matrix products: fp32; bf16 with fp32 sums (CPUs with AVX512_BF16, elsewhere fp32); "
       "auto = bf16 where the CPU has it, else fp32")
      ("vocab-src", po::value(&o.vocab_src), "use this source vocabulary instead of building one")
      ("vocab-tgt", po::value(&o.vocab_tgt), "use this target vocabulary instead of building one")
      ("min-count", po::value(&o.min_count)->default_value(2)->notifier(at_least("min-count", 1)), "vocabulary: keep tokens seen this often")
      ("subwords", po::value(&o.subwords)->default_value(0)->notifier(at_least("subwords", 0)),
       "learn SentencePiece subword units, about N per model, on the training text as --tokenizer gives it "
       "(0 = whole words)")
      ("subword-type", po::value(&subword_type)->default_value("bpe"), "bpe or unigram")
      ("subwords-separate", po::bool_switch(&subwords_separate),
       "one subword model per language instead of one joint model")
      ("subwords-sample", po::value(&o.subwords_sample)->default_value(2000000)->notifier([](long n) {
         // SentencePiece refuses samples of 1 to 100 sentences.
         if (n != 0 && n <= 100) fail_check("subwords-sample", "0 (every sentence) or more than 100", n);
       }),
       "SentencePiece learns on a random sample of at most N training sentences (a joint model: of both sides "
       "together; 0 = every sentence)")
      ("init-from", po::value(&o.init_from), "start from the weights of this model.npz (shapes must match)")
      ("max-length", po::value(&o.max_length)->default_value(100)->notifier(at_least("max-length", 1)), "skip training pairs longer than this (tokens)")
      ("no-corpus-cache", po::bool_switch(&no_corpus_cache),
       "read the training text into memory on every run instead of binarizing it once into corpus.bin in --model")
      ("log-freq", po::value(&o.log_freq)->default_value(100)->notifier(at_least("log-freq", 1)), "log line every N updates")
      ("resume", po::bool_switch(&o.require_resume), "require an existing run in --model to resume")
      ("tokenizer", po::value(&tokenizer)->default_value("words"),
       "words: lowercase (unless --no-lowercase) and split off punctuation, translations are such tokens; raw: "
       "the text as it is, cased, with --subwords learnt on the raw sentences, translations are raw text")
      ("no-lowercase", po::bool_switch(&no_lowercase), "--tokenizer words: keep case")
      ("bench-seconds", po::value(&o.bench_seconds)->default_value(0)->notifier(non_negative("bench-seconds")),
       "benchmark: after --bench-warmup updates, train this many seconds, print tgt_tok/s, exit without saving")
      ("bench-warmup", po::value(&o.bench_warmup)->default_value(20)->notifier(at_least("bench-warmup", 0)), "benchmark warm-up updates")
      ("profile", po::bool_switch(&profile_phases), "report the time spent in each phase (encoder, attention, ...)");
  options.add(progress_option_group(o.progress));
  po::variables_map vm;
  if (parse_options("train", "--train-src F --train-tgt F --valid-src F --valid-tgt F --model DIR [options]",
                    options, args, vm))
    return std::nullopt;
  const Preset sizes = preset_sizes(preset);
  o.model.emb = emb > 0 ? emb : sizes.emb;
  o.model.hidden = hidden > 0 ? hidden : sizes.hidden;
  o.model.maxout = maxout > 0 ? maxout : sizes.maxout;
  o.model.output = parse_output_kind(output_layer);
  o.model.enc_type = parse_encoder_type(enc_type);
  // (--preset gives the sizes)
  for (const auto& [name, value] : vm)
    if (!value.defaulted())
      for (const std::string& given : name == "preset" ? std::vector<std::string>{"emb", "hidden", "maxout"}
                                                        : std::vector<std::string>{name})
        o.options_given.push_back(given);
  check_tied_embeddings(o.model);
  o.batch_size = batch > 0 ? batch : sizes.batch;
  o.optimizer.kind = parse_optimizer_kind(optimizer);
  if (!vm.count("dropout-embeddings")) o.regularization.embedding_dropout = dropout;
  if (!vm.count("dropout-output")) o.regularization.output_dropout = dropout;
  o.regularization.guided_alignment_cost = parse_guided_alignment_cost(guided_alignment_cost);
  if (o.guided_alignment.empty()) {
    for (const char* option : {"guided-alignment-weight", "guided-alignment-cost"})
      if (!vm[option].defaulted()) throw Error(std::string("--") + option + " needs --guided-alignment FILE");
    o.regularization.guided_alignment = 0;
  }
  if (o.model.alignment_output > 0 && o.guided_alignment.empty())
    throw Error("--alignment-output needs --guided-alignment FILE: the word links it learns from");
  if (o.regularization.alignment_output_backprop && o.model.alignment_output == 0)
    throw Error("--alignment-output-backprop needs --alignment-output N");
  o.subword_type = parse_subword_type(subword_type);
  o.valid_metrics = parse_valid_metrics(valid_metrics);
  o.subwords_joint = !subwords_separate;
  o.shuffle = !no_shuffle;
  o.corpus_cache = !no_corpus_cache;
  o.tokenizer.kind = parse_tokenizer_kind(tokenizer);
  o.tokenizer.lowercase = !no_lowercase && o.tokenizer.kind == TokenizerKind::words;
  if (o.tokenizer.kind == TokenizerKind::raw && o.subwords == 0)
    throw Error("--tokenizer raw needs --subwords N: SentencePiece cuts the raw words into pieces");
  o.threads = threads;
  o.precision = precision_option(precision, PrecisionUse::training);
  o.profile = profile_phases;
  return o;
}

int train_command(const Args& args) {
  std::optional<TrainOptions> o = parse_train_options(args);
  if (!o) return 0;  // --help
  o->threads = set_threads(o->threads);
  return_large_buffers_to_the_system();
  profile::enable(o->profile);
  return train(*o);
}

}  // namespace rnnsearch::cli
