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
#include <sstream>
#include <vector>

#include "rnnsearch/error.h"

namespace rnnsearch {

void write_atomically(const std::string& requested_path,
                      const std::function<void(const std::string&)>& write) {
  std::error_code error;
  const auto status = std::filesystem::status(requested_path, error);  // follows symlinks
  if (!error && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
      !std::filesystem::is_directory(status)) {
    write(requested_path);  // a device or FIFO: nothing to replace, nothing to rename
    return;
  }
  // A symlink stays a symlink: its target is replaced (written, when it does not exist yet).
  std::string path = requested_path;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(requested_path, error))) {
    const auto target = std::filesystem::weakly_canonical(requested_path, error);
    if (!error) path = target.string();
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  try {
    write(tmp);
    // fsync so that after the rename the new content is on disk, not only the new name.
    int fd = ::open(tmp.c_str(), O_RDONLY);
    if (fd < 0) throw Error(located(tmp, 0, std::string("cannot reopen: ") + std::strerror(errno)));
    ::fsync(fd);
    ::close(fd);
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw Error(located(path, 0, std::string("cannot rename into place: ") + std::strerror(errno)));
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
