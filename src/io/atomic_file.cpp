#include "rnnsearch/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "rnnsearch/error.h"

namespace rnnsearch {

namespace {

// A device or FIFO: nothing to replace, nothing to rename.
bool written_directly(const std::string& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);  // follows symlinks
  return !error && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
         !std::filesystem::is_directory(status);
}

// A symlink stays a symlink: its target is replaced (written, when it does not exist yet).
std::string replaced_path(const std::string& requested_path) {
  std::error_code error;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(requested_path, error))) {
    const auto target = std::filesystem::weakly_canonical(requested_path, error);
    if (!error) return target.string();
  }
  return requested_path;
}

// fsync so that after the rename the new content is on disk, not only the new name.
void sync_and_rename(const std::string& tmp, const std::string& path) {
  int fd = ::open(tmp.c_str(), O_RDONLY);
  if (fd < 0) throw Error(located(tmp, 0, std::string("cannot reopen: ") + std::strerror(errno)));
  ::fsync(fd);
  ::close(fd);
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw Error(located(path, 0, std::string("cannot rename into place: ") + std::strerror(errno)));
}

}  // namespace

void write_atomically(const std::string& requested_path,
                      const std::function<void(const std::string&)>& write) {
  if (written_directly(requested_path)) {
    write(requested_path);
    return;
  }
  const std::string path = replaced_path(requested_path);
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  try {
    write(tmp);
    sync_and_rename(tmp, path);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
}

void write_file_atomically(const std::string& path, const std::string& content) {
  write_atomically(path, [&](const std::string& tmp) {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) throw Error(located(tmp, 0, std::string("cannot create: ") + std::strerror(errno)));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) throw Error(located(tmp, 0, "write failed (disk full?)"));
  });
}

AtomicOutputStream::AtomicOutputStream(const std::string& requested_path) : path_(requested_path) {
  if (written_directly(requested_path)) {
    file_.open(path_, std::ios::binary);
    if (!file_) throw Error(located(path_, 0, std::string("cannot open for writing: ") + std::strerror(errno)));
    return;
  }
  std::error_code error;
  if (std::filesystem::is_directory(requested_path, error))
    throw Error(located(requested_path, 0, "is a directory; cannot open for writing"));
  path_ = replaced_path(requested_path);
  // A new name (O_EXCL), mode 0666 less the umask as any new file: PATH.tmp-XXXXXX.
  static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::random_device random;
  for (int attempt = 0; attempt < 100 && tmp_.empty(); ++attempt) {
    std::string name = path_ + ".tmp-";
    for (int k = 0; k < 6; ++k) name += digits[random() % 36];
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      tmp_ = name;
    } else if (errno != EEXIST) {
      throw Error(located(requested_path, 0, std::string("cannot open for writing: ") + std::strerror(errno)));
    }
  }
  if (tmp_.empty()) throw Error(located(requested_path, 0, "cannot open for writing: no free temporary name"));
  file_.open(tmp_, std::ios::binary | std::ios::trunc);
  if (!file_) {
    std::remove(tmp_.c_str());
    throw Error(located(requested_path, 0, std::string("cannot open for writing: ") + std::strerror(errno)));
  }
}

AtomicOutputStream::~AtomicOutputStream() {
  if (committed_ || tmp_.empty()) return;
  file_.close();
  std::remove(tmp_.c_str());
}

void AtomicOutputStream::commit() {
  if (committed_) return;
  file_.close();
  if (!file_) throw Error(located(path_, 0, "write failed (disk full?)"));
  if (!tmp_.empty()) sync_and_rename(tmp_, path_);
  committed_ = true;
}

void check_not_an_input(const std::string& output, const std::vector<std::string>& inputs) {
  struct stat out {};
  if (output == "-" || ::stat(output.c_str(), &out) != 0 || !S_ISREG(out.st_mode)) return;
  for (const std::string& input : inputs) {
    struct stat in {};
    if (input != "-" && ::stat(input.c_str(), &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
      throw Error(located(output, 0, "is also the input " + input + "; write the output elsewhere"));
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(located(path, 0, std::string("cannot open: ") + std::strerror(errno)));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Read 1 MB at a time: optimizer.npz is three times the model, and reading it whole (into a
// doubling string) made every checkpoint save the peak of a run's memory.
uint32_t file_crc32(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(located(path, 0, std::string("cannot open: ") + std::strerror(errno)));
  std::vector<char> chunk(1 << 20);
  uLong crc = ::crc32(0L, Z_NULL, 0);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    crc = ::crc32_z(crc, reinterpret_cast<const Bytef*>(chunk.data()), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw Error(located(path, 0, "cannot read"));
  return static_cast<uint32_t>(crc);
}

}  // namespace rnnsearch
