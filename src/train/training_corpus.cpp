#include "rnnsearch/train/training_corpus.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/text/corpus_cache.h"
#include "rnnsearch/util/mpi.h"

namespace rnnsearch {
namespace {

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

}  // namespace rnnsearch
