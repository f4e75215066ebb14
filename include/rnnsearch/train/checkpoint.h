#pragma once
// The checkpoint set of a model directory (docs/design.md §2): model.npz (weights),
// optimizer.npz (Adam moments and step) and progress.json (everything else resuming
// needs). The set changes atomically, so a kill at any instant loses at most the work
// since the last save:
//
//   1. model.npz.staged-U and optimizer.npz.staged-U (U = the update) are written beside
//      the old set;
//   2. progress.json is replaced (the commit): it names them, with their CRC-32;
//   3. they are renamed to model.npz and optimizer.npz.
//
// Resuming takes each file under either name, whichever has the CRC progress.json
// recorded; a file of another set is refused. Leftovers of a killed save are removed when
// the next run starts.
#include <cmath>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "rnnsearch/model/parameters.h"
#include "rnnsearch/train/optimizer.h"

namespace rnnsearch {

// What resuming needs besides the weights and the optimizer moments.
struct Progress {
  long update = 0;
  long skipped_updates = 0;           // of them, skipped for a non-finite gradient: no optimizer step
  int epoch = 1;                      // 1-based, the epoch in progress
  long batch_in_epoch = 0;            // batches of this epoch already done
  double train_seconds = 0;
  double best_valid_cost = INFINITY;  // per-token cost
  long best_update = 0;
  int validations_without_improvement = 0;
  double lr_scale = 1;                // F^k of --lr-decay (lr_schedule.h)
  uint64_t seed = 1;
};

class CheckpointSet {
 public:
  explicit CheckpointSet(const std::string& dir) : dir_(dir) {}

  bool exists() const;  // progress.json is there: a run to resume
  void save(const Parameters<float>& params, const Optimizer& optimizer, const Progress& progress) const;
  // Loads weights and optimizer state; throws rnnsearch::Error naming the file if the set is
  // incomplete, corrupt, or mixed from different updates.
  Progress load(Parameters<float>& params, Optimizer& optimizer) const;
  // Removes what killed saves left: temporary files and staged files of uncommitted sets.
  // Only while this process holds the directory's lock.
  void remove_stale_files() const;

 private:
  std::string path(const std::string& name) const;
  // The path of a file of the committed set: the staged name progress.json records under
  // file_key, or the usual `name`, whichever has the CRC recorded under crc_key.
  std::string committed_file(const nlohmann::json& progress, const char* file_key, const char* crc_key,
                             const char* name) const;
  std::string dir_;
};

}  // namespace rnnsearch
