#include "rnnsearch/train/checkpoint.h"

#include <filesystem>
#include <utility>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "rnnsearch/error.h"
#include "rnnsearch/io/atomic_file.h"
#include "rnnsearch/model/model_io.h"

namespace rnnsearch {
namespace {

uint32_t file_crc32(const std::string& path) {
  const std::string bytes = read_file(path);
  return static_cast<uint32_t>(
      ::crc32(::crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
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
          {"seed", p.seed},
          {"model_crc32", model_crc},
          {"optimizer_crc32", optimizer_crc}};
}

Progress progress_from_json(const nlohmann::json& j) {
  Progress p;
  p.update = j.at("update").get<long>();
  p.skipped_updates = j.value("skipped_updates", 0L);  // absent in checkpoints of older versions
  p.epoch = j.at("epoch").get<int>();
  p.batch_in_epoch = j.at("batch_in_epoch").get<long>();
  p.train_seconds = j.at("train_seconds").get<double>();
  p.best_valid_cost = j.at("best_valid_cost").is_null() ? INFINITY : j.at("best_valid_cost").get<double>();
  p.best_update = j.at("best_update").get<long>();
  p.validations_without_improvement = j.at("validations_without_improvement").get<int>();
  p.seed = j.at("seed").get<uint64_t>();
  return p;
}

}  // namespace

std::string CheckpointSet::path(const char* name) const { return model_file(dir_, name); }

bool CheckpointSet::exists() const { return std::filesystem::exists(path(model_files::kProgress)); }

void CheckpointSet::save(const Parameters<float>& params, const Optimizer& optimizer, const Progress& progress) const {
  save_weights(path(model_files::kWeights), params);
  optimizer.save(path(model_files::kOptimizer));
  write_json_file(path(model_files::kProgress),
                  progress_json(progress, file_crc32(path(model_files::kWeights)),
                                file_crc32(path(model_files::kOptimizer))));
}

Progress CheckpointSet::load(Parameters<float>& params, Optimizer& optimizer) const {
  const std::string progress_path = path(model_files::kProgress);
  const nlohmann::json j = read_json_file(progress_path);
  Progress progress;
  uint32_t model_crc = 0, optimizer_crc = 0;
  try {
    progress = progress_from_json(j);
    model_crc = j.at("model_crc32").get<uint32_t>();
    optimizer_crc = j.at("optimizer_crc32").get<uint32_t>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(located(progress_path, 0, e.what()));
  }
  for (const auto& [file, crc] : {std::pair{model_files::kWeights, model_crc}, {model_files::kOptimizer, optimizer_crc}})
    if (file_crc32(path(file)) != crc)
      throw Error(located(path(file), 0,
                          std::string("is not the file ") + model_files::kProgress +
                              " was saved with (interrupted while saving a checkpoint?); " +
                              model_files::kBestWeights + " holds the best weights, --init-from it to start again"));
  load_weights(path(model_files::kWeights), params);
  optimizer.load(path(model_files::kOptimizer));
  if (optimizer.steps() != progress.update - progress.skipped_updates)
    throw Error(located(path(model_files::kOptimizer), 0,
                        "has taken " + std::to_string(optimizer.steps()) + " steps but " + model_files::kProgress +
                            " counts " + std::to_string(progress.update - progress.skipped_updates) +
                            " (interrupted while saving?)"));
  return progress;
}

}  // namespace rnnsearch
