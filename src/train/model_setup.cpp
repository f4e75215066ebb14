#include "rnnsearch/train/model_setup.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/text/corpus_cache.h"
#include "rnnsearch/util/mpi.h"

namespace rnnsearch {
namespace {

// config.json's "training": what the run was started with, for the record.
nlohmann::json training_json(const TrainOptions& o) {
  return {{"train_src", o.train_src},
          {"train_tgt", o.train_tgt},
          {"valid_src", o.valid_src},
          {"valid_tgt", o.valid_tgt},
          {"batch_size", o.batch_size},
          {"optimizer", o.optimizer.kind == OptimizerKind::adam ? "adam" : "sgd"},
          {"lr", o.optimizer.lr},
          {"clip_norm", o.clip_norm},
          {"embedding_dropout", o.regularization.embedding_dropout},
          {"output_dropout", o.regularization.output_dropout},
          {"source_word_dropout", o.regularization.source_word_dropout},
          {"target_word_dropout", o.regularization.target_word_dropout},
          {"rnn_dropout", o.regularization.rnn_dropout},
          {"label_smoothing", o.regularization.label_smoothing},
          {"guided_alignment", o.guided_alignment},
          {"guided_alignment_weight", o.regularization.guided_alignment},
          {"guided_alignment_cost", guided_alignment_cost_name(o.regularization.guided_alignment_cost)},
          {"alignment_output_backprop", o.regularization.alignment_output_backprop},
          {"seed", o.seed},
          {"shuffle", o.shuffle},
          {"min_count", o.min_count},
          {"max_length", o.max_length},
          {"subwords", o.subwords},
          {"subword_type", subword_type_name(o.subword_type)},
          {"subwords_joint", o.subwords_joint},
          {"subwords_sample", o.subwords_sample}};
}

// A vocabulary of the tokens of a training file, cut into pieces by `subwords`, counted in
// one streamed pass on `threads` threads.
Vocab streamed_vocab(const std::string& path, const TokenizerOptions& tokenizer, const Subwords& subwords,
                     int min_count, int threads) {
  TokenCounts counts;
  count_tokens(path, tokenizer, subwords, counts, threads);
  return Vocab::build(counts, min_count);
}

// Learns the subword model(s) on the training text (tokenized, or the raw words of raw-text
// models: SentencePiece then sees the raw sentences), writes them into dir, and
// returns the vocabularies of the pieces they cut the training text into. A joint model
// reads the source file, then the target file, as if they were one text.
void learn_subwords(const TrainOptions& o, const std::string& dir, ModelDefinition& model, ProgressMeter& progress) {
  const std::string src_path = model_file(dir, model_files::kSrcSubwords);
  const std::string tgt_path = model_file(dir, model_files::kTgtSubwords);
  progress.start("learning the subword model" + std::string(o.subwords_joint ? "" : "s"));
  auto learn = [&](const std::vector<std::string>& paths) {
    return Subwords::train(paths, o.tokenizer, o.subwords, o.subword_type, o.subwords_sample);
  };
  if (o.subwords_joint) {
    const std::string joint = learn({o.train_src, o.train_tgt});
    write_file_atomically(src_path, joint);
    write_file_atomically(tgt_path, joint);
  } else {
    write_file_atomically(src_path, learn({o.train_src}));
    write_file_atomically(tgt_path, learn({o.train_tgt}));
  }
  model.src_subwords = Subwords::load(src_path);
  model.tgt_subwords = Subwords::load(tgt_path);
  // Every piece the model learnt on this text gets an id: min_count does not apply.
  progress.start("counting the vocabularies");
  model.src_vocab = streamed_vocab(o.train_src, o.tokenizer, model.src_subwords, 1, o.threads);
  model.tgt_vocab = streamed_vocab(o.train_tgt, o.tokenizer, model.tgt_subwords, 1, o.threads);
  // From now on (training text, validation) cut into pieces with ids, as load_model_definition does.
  model.src_subwords.restrict_to(model.src_vocab.tokens());
  model.tgt_subwords.restrict_to(model.tgt_vocab.tokens());
}

// A training file as the corpus cache's key records it.
nlohmann::json file_key(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error(located(path, 0, std::string("cannot open: ") + std::strerror(errno)));
  return {{"path", std::filesystem::absolute(path).string()},
          {"size", st.st_size},
          {"mtime_ns", static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec}};
}

// The CRC-32 of a model directory file, null when there is none (no subword models).
nlohmann::json file_crc(const std::string& dir, const char* name) {
  const std::string path = model_file(dir, name);
  if (!std::filesystem::exists(path)) return nullptr;
  return file_crc32(path);
}

}  // namespace

std::string corpus_cache_key(const TrainOptions& o, const std::string& dir, const TokenizerOptions& tokenizer) {
  nlohmann::json key{{"train_src", file_key(o.train_src)},
                        {"train_tgt", file_key(o.train_tgt)},
                        {"vocab_src", file_crc(dir, model_files::kSrcVocab)},
                        {"vocab_tgt", file_crc(dir, model_files::kTgtVocab)},
                        {"subwords_src", file_crc(dir, model_files::kSrcSubwords)},
                        {"subwords_tgt", file_crc(dir, model_files::kTgtSubwords)},
                        {"tokenizer", {{"kind", tokenizer_kind_name(tokenizer.kind)}, {"lowercase", tokenizer.lowercase}}},
                        {"max_length", o.max_length}};
  if (!o.guided_alignment.empty()) key["guided_alignment"] = file_key(o.guided_alignment);
  return key.dump();
}

ParallelCorpus training_corpus(const TrainOptions& o, const std::string& dir, const ModelDefinition& d, TrainLog& log,
                               ProgressMeter& progress) {
  auto read_into_memory = [&] {
    progress.start("reading the training corpus");
    ParallelCorpus corpus = read_parallel_corpus(o.train_src, o.train_tgt, d.src_subwords, d.tgt_subwords, d.src_vocab,
                                                 d.tgt_vocab, d.tokenizer, o.max_length, o.threads, o.guided_alignment);
    progress.finish();
    return corpus;
  };
  if (!o.corpus_cache) return read_into_memory();
  // Rank 0 checks the file and binarizes the text when it must; then every rank maps it.
  const std::string cache = model_file(dir, model_files::kCorpusCache), key = corpus_cache_key(o, dir, d.tokenizer);
  auto map = [&](std::string& problem) {
    return map_corpus_cache(cache, key, d.src_vocab.size(), d.tgt_vocab.size(), problem);
  };
  std::string problem;
  std::optional<ParallelCorpus> corpus;
  if (mpi::is_root()) {
    corpus = map(problem);
    if (corpus) {
      log.line(std::string(model_files::kCorpusCache) + ": the training corpus as binarized before (text not read)");
    } else {
      CorpusCacheWriter writer(cache, key, !o.guided_alignment.empty());
      progress.start("binarizing the training corpus", "pairs");
      stream_parallel_corpus(o.train_src, o.train_tgt, d.src_subwords, d.tgt_subwords, d.src_vocab, d.tgt_vocab,
                             d.tokenizer, o.max_length, o.threads, [&](const ParallelCorpus& chunk) {
                               writer.add(chunk);
                               progress.add(chunk.size());
                             }, o.guided_alignment);
      writer.finish();
      progress.finish();
      log.line(std::string(model_files::kCorpusCache) + " " + problem + ": the training corpus binarized into it");
    }
  }
  mpi::barrier();
  if (!corpus) corpus = map(problem);
  if (corpus) return std::move(*corpus);
  if (mpi::is_root()) throw Error(located(cache, 0, problem));
  // A rank whose training files are not rank 0's (another machine's copies): its own text,
  // which the check that every rank reads the same corpus then compares.
  return read_into_memory();
}

ModelDefinition create_model_definition(const TrainOptions& o, const std::string& dir, ProgressMeter& progress) {
  // (a resumed run takes its model from config.json: these hold for the new run's options only)
  check_decoder_layers(o.model);
  if (o.model.skip && o.model.enc_depth == 1 && o.model.dec_depth == 1)
    throw Error("--skip adds a layer's input to its output from the second layer on: give --enc-depth or --dec-depth 2 "
                "or more");
  if (o.model.enc_type == EncoderType::alternating && o.model.enc_depth == 1)
    throw Error("--enc-type alternating flips the direction from the second encoder layer on: give --enc-depth 2 or "
                "more");
  if (!o.vocab_src.empty() != !o.vocab_tgt.empty()) throw Error("--vocab-src and --vocab-tgt go together");
  if (o.subwords > 0 && !o.vocab_src.empty()) throw Error("--subwords learns its own vocabularies: drop --vocab-src/--vocab-tgt");
  ModelDefinition model;
  model.tokenizer = o.tokenizer;
  if (o.subwords > 0) {
    learn_subwords(o, dir, model, progress);
  } else {
    if (o.vocab_src.empty() || o.vocab_tgt.empty()) progress.start("counting the vocabularies");
    // A word-level run must not pick up the subword models of an earlier run in dir.
    for (const char* name : {model_files::kSrcSubwords, model_files::kTgtSubwords})
      std::filesystem::remove(model_file(dir, name));
    model.src_vocab = o.vocab_src.empty() ? streamed_vocab(o.train_src, o.tokenizer, Subwords(), o.min_count, o.threads)
                                          : Vocab::load(o.vocab_src);
    model.tgt_vocab = o.vocab_tgt.empty() ? streamed_vocab(o.train_tgt, o.tokenizer, Subwords(), o.min_count, o.threads)
                                          : Vocab::load(o.vocab_tgt);
  }
  progress.finish();
  model.config = o.model;
  model.config.src_vocab = static_cast<int>(model.src_vocab.size());
  model.config.tgt_vocab = static_cast<int>(model.tgt_vocab.size());
  model.src_vocab.save(model_file(dir, model_files::kSrcVocab));
  model.tgt_vocab.save(model_file(dir, model_files::kTgtVocab));
  write_json_file(model_file(dir, model_files::kConfig), model_config_json(model.config, o.tokenizer, training_json(o)));
  return model;
}

namespace {

std::string on_off(bool on) { return on ? "on" : "off"; }

// The model options as the command line names them, each with its value in a ModelConfig.
using ModelOptionValue = std::string (*)(const ModelConfig&);
const std::pair<const char*, ModelOptionValue> kModelOptions[] = {
    {"emb", [](const ModelConfig& c) { return std::to_string(c.emb); }},
    {"hidden", [](const ModelConfig& c) { return std::to_string(c.hidden); }},
    {"maxout", [](const ModelConfig& c) { return std::to_string(c.maxout); }},
    {"output-layer", [](const ModelConfig& c) { return output_kind_name(c.output); }},
    {"tied-embeddings", [](const ModelConfig& c) { return on_off(c.tied_embeddings); }},
    {"layer-normalization", [](const ModelConfig& c) { return on_off(c.layer_norm); }},
    {"enc-cell-depth", [](const ModelConfig& c) { return std::to_string(c.enc_cell_depth); }},
    {"dec-cell-base-depth", [](const ModelConfig& c) { return std::to_string(c.dec_cell_base_depth); }},
    {"enc-depth", [](const ModelConfig& c) { return std::to_string(c.enc_depth); }},
    {"enc-type", [](const ModelConfig& c) { return encoder_type_name(c.enc_type); }},
    {"dec-depth", [](const ModelConfig& c) { return std::to_string(c.dec_depth); }},
    {"dec-cell-high-depth", [](const ModelConfig& c) { return std::to_string(c.dec_cell_high_depth); }},
    {"skip", [](const ModelConfig& c) { return on_off(c.skip); }},
    {"alignment-output", [](const ModelConfig& c) { return std::to_string(c.alignment_output); }},
};

ModelOptionValue model_option(const std::string& name) {
  for (const auto& [option, value] : kModelOptions)
    if (name == option) return value;
  throw std::logic_error("model_option: no model option --" + name);
}

}  // namespace

void check_resumed_model(const TrainOptions& options, const ModelConfig& run, const std::string& config_path) {
  const std::vector<std::string>& given = options.options_given;
  for (const auto& [name, value] : kModelOptions) {
    if (std::find(given.begin(), given.end(), name) == given.end()) continue;
    const std::string asked = value(options.model), had = value(run);
    if (asked != had)
      throw Error(located(config_path, 0,
                          std::string("the run to resume has --") + name + " " + had + ", not " + asked +
                              ": give another --model, or leave the option out to go on with the run's"));
  }
}

void check_resumed_text(const TrainOptions& o, const ModelDefinition& model, const std::string& dir) {
  const std::string config_path = model_file(dir, model_files::kConfig);
  const auto refuse = [&](const std::string& had, const std::string& asked, const std::string& fix) {
    throw Error(located(config_path, 0, "the run to resume " + had + ", not " + asked + ": give another --model or " + fix));
  };
  if (model.tokenizer.kind != o.tokenizer.kind)
    refuse(std::string("reads --tokenizer ") + tokenizer_kind_name(model.tokenizer.kind) + " text",
           tokenizer_kind_name(o.tokenizer.kind), "the same --tokenizer");
  const std::vector<std::string>& given = o.options_given;
  const auto was_given = [&](const char* name) { return std::find(given.begin(), given.end(), name) != given.end(); };
  if (was_given("no-lowercase") && model.tokenizer.lowercase && !o.tokenizer.lowercase)
    refuse("lowercases its text", "--no-lowercase", "leave --no-lowercase out");
  // The options that made the vocabularies, against config.json's record of them ("training";
  // a key missing in models from before it is not checked; an option that made nothing in
  // this run, --min-count of a subword run or --subword-type of a word-level one, neither).
  const nlohmann::json asked = training_json(o), had = read_json_file(config_path).value("training", nlohmann::json::object());
  enum class Makes { words, subwords, either };  // the kind of run in which the option makes something
  static const std::tuple<const char*, const char*, Makes> kRecorded[] = {
      {"min-count", "min_count", Makes::words},
      {"subwords", "subwords", Makes::either},
      {"subword-type", "subword_type", Makes::subwords},
      {"subwords-separate", "subwords_joint", Makes::subwords},
      {"subwords-sample", "subwords_sample", Makes::subwords}};
  const Makes run_kind = had.value("subwords", 0) > 0 ? Makes::subwords : Makes::words;
  for (const auto& [name, key, makes] : kRecorded) {
    if (makes != Makes::either && makes != run_kind) continue;
    if (!was_given(name) || !had.contains(key) || had[key] == asked[key]) continue;
    const auto text = [&](const nlohmann::json& value) {
      if (value.is_boolean()) return std::string(value.get<bool>() ? "off" : "on");  // subwords_joint = !separate
      return value.is_string() ? value.get<std::string>() : value.dump();
    };
    refuse(std::string("has --") + name + " " + text(had[key]), text(asked[key]),
           std::string("leave --") + name + " out to go on with the run's");
  }
  // Given vocabularies must be the run's (vocab.src/vocab.tgt are what it trains with).
  for (const auto& [name, path, vocab, file] :
       {std::tuple{"vocab-src", &o.vocab_src, &model.src_vocab, model_files::kSrcVocab},
        std::tuple{"vocab-tgt", &o.vocab_tgt, &model.tgt_vocab, model_files::kTgtVocab}}) {
    if (path->empty()) continue;
    if (!(Vocab::load(*path) == *vocab))
      throw Error(located(*path, 0, std::string("is not the vocabulary of the run to resume (") +
                                        model_file(dir, file) + "): give another --model, or leave --" + name + " out"));
  }
}

namespace {

// The model --init-from's weights come from: their directory (symlinks resolved), when it holds
// config.json and both vocabularies; nothing for weights alone.
struct ModelBeside {
  std::string dir;
  ModelDefinition model;
};
std::optional<ModelBeside> model_beside(const std::string& weights) {
  const std::string dir = std::filesystem::weakly_canonical(weights).parent_path().string();
  for (const char* name : {model_files::kConfig, model_files::kSrcVocab, model_files::kTgtVocab})
    if (!std::filesystem::exists(model_file(dir, name))) return std::nullopt;
  try {
    return ModelBeside{dir, load_model_definition(dir)};
  } catch (const Error& e) {
    throw Error("--init-from " + weights + ": " + e.what());
  }
}

[[noreturn]] void refuse_init_from(const std::string& weights, const std::string& file, const std::string& problem) {
  throw Error(located(file, 0, "--init-from " + weights + ": " + problem));
}

}  // namespace

void check_init_from_options(const std::string& weights, const TrainOptions& o) {
  const std::optional<ModelBeside> from = model_beside(weights);
  if (!from) return;
  const std::string config = model_file(from->dir, model_files::kConfig);
  // Options that leave every tensor's shape as it is but change what the weights compute
  for (const char* name : {"enc-type", "skip"}) {
    const std::string had = model_option(name)(from->model.config), asked = model_option(name)(o.model);
    if (had != asked)
      refuse_init_from(weights, config, std::string("its model has --") + name + " " + had + ", this run " + asked);
  }
  // and the text the embeddings were learnt on
  const TokenizerOptions& text = from->model.tokenizer;
  if (text.kind != o.tokenizer.kind || text.lowercase != o.tokenizer.lowercase)
    refuse_init_from(weights, config,
                     std::string("its model reads --tokenizer ") + tokenizer_kind_name(text.kind) +
                         (text.lowercase ? " (lowercased)" : "") + " text, this run " +
                         tokenizer_kind_name(o.tokenizer.kind) + (o.tokenizer.lowercase ? " (lowercased)" : ""));
}

void check_init_from_text(const std::string& weights, const ModelDefinition& model, const std::string& dir) {
  const std::optional<ModelBeside> from = model_beside(weights);
  if (!from) return;
  // Embedding row k is token k of the vocabulary the weights were trained with, and a
  // subword vocabulary's tokens are its subword model's pieces
  for (const char* name : {model_files::kSrcSubwords, model_files::kTgtSubwords})
    if (!same_model_file(from->dir, dir, name))
      refuse_init_from(weights, model_file(from->dir, name), "its model cuts words into other subword units than this run's");
  if (!(from->model.src_vocab == model.src_vocab) || !(from->model.tgt_vocab == model.tgt_vocab))
    refuse_init_from(weights,
                     model_file(from->dir, from->model.src_vocab == model.src_vocab ? model_files::kTgtVocab
                                                                                     : model_files::kSrcVocab),
                     "its model has other vocabularies than this run's: give this run --vocab-src " +
                         model_file(from->dir, model_files::kSrcVocab) + " --vocab-tgt " +
                         model_file(from->dir, model_files::kTgtVocab));
}

}  // namespace rnnsearch
