#include "rnnsearch/train/checkpoint.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/model/model_io.h"

namespace rnnsearch {
namespace {

constexpr const char* kStaged = ".staged-";

// A checkpoint file's name while it is being committed: "model.npz" -> "model.npz.staged-U"
// (a name no user gives a snapshot they keep: stale ones are deleted).
std::string staged_name(const char* name, long update) { return name + std::string(kStaged) + std::to_string(update); }

// "BASE" followed by `suffix` and digits only.
bool is_numbered(const std::string& name, const std::string& base, const std::string& suffix) {
  const std::string stem = base + suffix;
  return name.size() > stem.size() && name.rfind(stem, 0) == 0 &&
         name.find_first_not_of("0123456789", stem.size()) == std::string::npos;
}

// ".tmp.PID", or libzip's own temporary name for it, ".tmp.PID.XXXXXX".
bool is_temporary_suffix(const std::string& suffix) {
  const size_t dot = suffix.find('.', 5);
  return is_numbered(suffix.substr(0, dot), "", ".tmp.");
}

// What a killed save leaves: "model.npz.staged-U" of an uncommitted set, and the
// temporary files of write_atomically (and libzip) of a model directory file or a staged file.
bool is_leftover(const std::string& name) {
  const size_t tmp = name.find(".tmp.");
  if (tmp != std::string::npos && !is_temporary_suffix(name.substr(tmp))) return false;
  const std::string file = name.substr(0, tmp);
  for (const char* base : {model_files::kWeights, model_files::kOptimizer})
    if (is_numbered(file, base, kStaged)) return true;
  if (tmp == std::string::npos) return false;
  for (const char* base : {model_files::kWeights, model_files::kBestWeights, model_files::kOptimizer,
                           model_files::kProgress, model_files::kConfig, model_files::kSrcVocab, model_files::kTgtVocab,
                           model_files::kSrcSubwords, model_files::kTgtSubwords, model_files::kCorpusCache})
    if (file == base) return true;
  return false;
}

void rename_file(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0)
    throw Error(located(to, 0, std::string("cannot rename ") + from + " into place: " + std::strerror(errno)));
}

// progress.json: the Progress fields, and the CRC-32 of the model.npz and optimizer.npz
// it was saved with.
nlohmann::json progress_json(const Progress& p, uint32_t model_crc, uint32_t optimizer_crc) {
  return {{"update", p.update},
          {"skipped_updates", p.skipped_updates},
          {"epoch", p.epoch},
          {"batch_in_epoch", p.batch_in_epoch},
          {"train_seconds", p.train_seconds},
          {"best_valid_cost", std::isfinite(p.best_valid_cost) ? nlohmann::json(p.best_valid_cost) : nlohmann::json()},
          {"best_update", p.best_update},
          {"validations_without_improvement", p.validations_without_improvement},
          {"lr_scale", p.lr_scale},
          {"seed", p.seed},
          {"model_crc32", model_crc},
          {"optimizer_crc32", optimizer_crc}};
}

// A whole number from 0 to T's maximum. nlohmann's get<int>() of 1e70 (or get<uint32_t>()
// of -1) converts out of range, undefined behaviour that fuzz_progress_json found: refuse.
template <typename T>
T whole_number(const nlohmann::json& j, const char* key) {
  const nlohmann::json& value = j.at(key);
  if (!value.is_number_unsigned() || value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<T>::max()))
    throw nlohmann::json::other_error::create(
        501, std::string(key) + " must be a whole number from 0 to " + std::to_string(std::numeric_limits<T>::max()),
        nullptr);
  return value.get<T>();
}

Progress progress_from_json(const nlohmann::json& j) {
  Progress p;
  p.update = whole_number<long>(j, "update");
  // (absent in checkpoints of older versions)
  p.skipped_updates = j.contains("skipped_updates") ? whole_number<long>(j, "skipped_updates") : 0;
  p.epoch = whole_number<int>(j, "epoch");
  p.batch_in_epoch = whole_number<long>(j, "batch_in_epoch");
  p.train_seconds = j.at("train_seconds").get<double>();
  p.best_valid_cost = j.at("best_valid_cost").is_null() ? INFINITY : j.at("best_valid_cost").get<double>();
  p.best_update = whole_number<long>(j, "best_update");
  p.validations_without_improvement = whole_number<int>(j, "validations_without_improvement");
  p.seed = whole_number<uint64_t>(j, "seed");
  if (j.contains("lr_scale")) {  // (absent in checkpoints of older versions)
    p.lr_scale = j.at("lr_scale").get<double>();
    if (!(p.lr_scale > 0 && p.lr_scale <= 1))
      throw nlohmann::json::other_error::create(501, "lr_scale must be in (0, 1]", nullptr);
  }
  return p;
}

}  // namespace

std::string CheckpointSet::path(const std::string& name) const { return model_file(dir_, name); }

bool CheckpointSet::exists() const { return std::filesystem::exists(path(model_files::kProgress)); }

void CheckpointSet::save(const Parameters<float>& params, const Optimizer& optimizer, const Progress& progress) const {
  // 1. the new files under names of their own, beside the previous set
  const std::string model = staged_name(model_files::kWeights, progress.update);
  const std::string moments = staged_name(model_files::kOptimizer, progress.update);
  save_weights(path(model), params);
  optimizer.save(path(moments));
  // 2. the commit: progress.json names them and their CRCs
  nlohmann::json j = progress_json(progress, file_crc32(path(model)), file_crc32(path(moments)));
  j["model_file"] = model;
  j["optimizer_file"] = moments;
  write_json_file(path(model_files::kProgress), j);
  // 3. they take the usual names (load accepts either name, by CRC); the old set is gone
  rename_file(path(model), path(model_files::kWeights));
  rename_file(path(moments), path(model_files::kOptimizer));
}

void CheckpointSet::remove_stale_files() const {
  std::set<std::string> keep;  // staged files of the committed set not yet renamed
  if (exists()) {
    const nlohmann::json j = read_json_file(path(model_files::kProgress));
    try {
      keep = {j.value("model_file", ""), j.value("optimizer_file", "")};
    } catch (const nlohmann::json::exception& e) {
      throw Error(located(path(model_files::kProgress), 0, e.what()));
    }
  }
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir_, error)) {
    const std::string name = entry.path().filename().string();
    if (is_leftover(name) && !keep.count(name))
      std::filesystem::remove(entry.path(), error);
  }
}

std::string CheckpointSet::committed_file(const nlohmann::json& progress, const char* file_key, const char* crc_key,
                                          const char* name) const {
  const uint32_t crc = whole_number<uint32_t>(progress, crc_key);
  for (const std::string& candidate : {progress.value(file_key, std::string(name)), std::string(name)})
    if (std::filesystem::exists(path(candidate)) && file_crc32(path(candidate)) == crc)
      return path(candidate);
  throw Error(located(path(name), 0,
                      std::string("is not the file ") + model_files::kProgress +
                          " was saved with (interrupted while saving a checkpoint?); " +
                          model_files::kBestWeights + " holds the best weights, --init-from it to start again"));
}

Progress CheckpointSet::load(Parameters<float>& params, Optimizer& optimizer) const {
  const std::string progress_path = path(model_files::kProgress);
  const nlohmann::json j = read_json_file(progress_path);
  Progress progress;
  std::string model, moments;
  try {
    progress = progress_from_json(j);
    model = committed_file(j, "model_file", "model_crc32", model_files::kWeights);
    moments = committed_file(j, "optimizer_file", "optimizer_crc32", model_files::kOptimizer);
  } catch (const nlohmann::json::exception& e) {
    throw Error(located(progress_path, 0, e.what()));
  }
  load_weights(model, params);
  optimizer.load(moments);
  if (optimizer.steps() != progress.update - progress.skipped_updates)
    throw Error(located(moments, 0,
                        "has taken " + std::to_string(optimizer.steps()) + " steps but " + model_files::kProgress +
                            " counts " + std::to_string(progress.update - progress.skipped_updates) +
                            " (interrupted while saving?)"));
  return progress;
}

}  // namespace rnnsearch
