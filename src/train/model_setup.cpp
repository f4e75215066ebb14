#include "rnnsearch/train/model_setup.h"

#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/text/corpus.h"
#include "rnnsearch/train/train_options.h"

namespace rnnsearch {

namespace {

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

}  // namespace

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

}  // namespace rnnsearch
