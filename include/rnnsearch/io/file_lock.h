#pragma once
// An exclusive advisory lock (flock) on a file, held for the object's lifetime: two
// `rnnsearch train` on one model directory would overwrite each other's checkpoints, so the
// second one is refused. The kernel drops the lock when the process ends, however it ends,
// so a killed trainer never leaves a stale lock behind.
#include <string>

namespace rnnsearch {

class FileLock {
 public:
  // Creates path if needed and locks it; throws rnnsearch::Error naming it, with `holder`
  // saying who has it, when another process holds the lock.
  FileLock(const std::string& path, const std::string& holder);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace rnnsearch
