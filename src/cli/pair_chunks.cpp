// Sentence pairs a chunk at a time for score and align (commands.h's PairChunks).
#include <filesystem>

#include "commands.h"
#include "rnnsearch/align/aligner.h"
#include "rnnsearch/error.h"
#include "rnnsearch/util/mpi.h"

namespace rnnsearch::cli {

PairChunks::PairChunks(const std::string& src_path, const std::string& tgt_path)
    : source_name_(src_path), target_name_(tgt_path), inputs_{src_path, tgt_path} {
  if (!mpi::is_root()) return;
  src_ = std::make_unique<LineReader>(src_path);
  tgt_ = std::make_unique<LineReader>(tgt_path);
  const size_t src_lines = count_lines_of_file(src_path), tgt_lines = count_lines_of_file(tgt_path);
  const auto regular = [](const std::string& path) {
    std::error_code error;
    return path != "-" && std::filesystem::is_regular_file(path, error);
  };
  if (regular(src_path) && regular(tgt_path) && src_lines != tgt_lines)
    throw Error(src_path + " and " + tgt_path + " differ in length: " + std::to_string(src_lines) + " and " +
                std::to_string(tgt_lines) + " lines");
  total_ = src_lines == tgt_lines ? src_lines : 0;
}

PairChunks::PairChunks(const std::string& parallel_path)
    : source_name_(parallel_path == "-" ? "stdin" : parallel_path), target_name_(source_name_),
      inputs_{parallel_path} {
  if (!mpi::is_root()) return;
  src_ = std::make_unique<LineReader>(parallel_path);
  total_ = count_lines_of_file(parallel_path);
}

PairChunks::~PairChunks() = default;

bool PairChunks::next(size_t count, std::vector<std::string>& src, std::vector<std::string>& tgt) {
  src.clear();
  tgt.clear();
  if (src_) {
    std::string line;
    while (src.size() < count && src_->next(line)) {
      if (!tgt_) {
        src.emplace_back();
        tgt.emplace_back();
        align::split_parallel_line(line, src.back(), tgt.back(), source_name_, src_->line_number());
        continue;
      }
      src.push_back(std::move(line));
      if (!tgt_->next(line))
        throw Error(source_name_ + " and " + target_name_ + " differ in length: " + source_name_ +
                    " has more lines than " + target_name_ + " (line " + std::to_string(src_->line_number()) + ")");
      tgt.push_back(std::move(line));
    }
    if (tgt_ && src.size() < count && tgt_->next(line))
      throw Error(source_name_ + " and " + target_name_ + " differ in length: " + target_name_ +
                  " has more lines than " + source_name_ + " (line " + std::to_string(tgt_->line_number()) + ")");
  }
  mpi::broadcast(src);
  mpi::broadcast(tgt);
  return !src.empty();
}

}  // namespace rnnsearch::cli
