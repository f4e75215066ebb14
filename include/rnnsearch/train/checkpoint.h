#pragma once
// The checkpoint set of a model directory (docs/design.md §2): model.npz (weights),
// optimizer.npz (Adam moments and step) and progress.json (everything else resuming
// needs). Each file is written atomically, in that order, and progress.json is the commit
// point: it records the CRC-32 of the other two, so a set left by a crash between two
// writes is refused instead of resumed.
#include <cmath>
#include <cstdint>
#include <string>

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

 private:
  std::string path(const char* name) const;
  std::string dir_;
};

}  // namespace rnnsearch
