#pragma once
// Every file a run writes goes to "PATH.tmp.PID" first and is renamed into place, so a
// crash or kill never leaves a half-written model, vocabulary or log behind. Only regular
// files are replaced that way: a symlink's target is written (the link stays), and a
// device or FIFO (-o /dev/null, -o /dev/stdout, a pipe) is written to directly.
#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace rnnsearch {

// Calls write(tmp_path), then fsyncs and renames tmp_path to path (see above for paths that
// are not regular files). On any exception the temporary file is removed and the exception
// propagates.
void write_atomically(const std::string& path, const std::function<void(const std::string&)>& write);

// Convenience: writes `content` to `path` atomically.
void write_file_atomically(const std::string& path, const std::string& content);

// The same for output written as it is made (translate's, batch by batch): the stream goes to
// "PATH.tmp-XXXXXX" (a new name) in PATH's directory, which commit() renames to PATH. Destroyed
// without commit() (an error midway), it removes that file: an existing PATH is left as it
// was. Paths that are not regular files are written directly, symlinks followed, as above.
class AtomicOutputStream {
 public:
  // Throws rnnsearch::Error naming path if it is a directory or the file cannot be created.
  explicit AtomicOutputStream(const std::string& path);
  ~AtomicOutputStream();
  AtomicOutputStream(const AtomicOutputStream&) = delete;
  AtomicOutputStream& operator=(const AtomicOutputStream&) = delete;

  std::ostream& stream() { return file_; }
  // Flushes, fsyncs and renames into place; throws rnnsearch::Error naming the file if
  // anything failed to be written (the temporary file is then removed).
  void commit();

 private:
  std::string path_, tmp_;  // tmp_ empty: path_ written directly
  std::ofstream file_;
  bool committed_ = false;
};

std::string read_file(const std::string& path);  // throws rnnsearch::Error if unreadable
// The CRC-32 of a file's bytes, read 1 MB at a time; throws rnnsearch::Error if unreadable.
uint32_t file_crc32(const std::string& path);

// Throws rnnsearch::Error if output names the same file as one of inputs (same device and
// inode): writing it would destroy the input before it is read.
void check_not_an_input(const std::string& output, const std::vector<std::string>& inputs);

}  // namespace rnnsearch
