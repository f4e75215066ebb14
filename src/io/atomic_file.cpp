#include "rnnsearch/io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "rnnsearch/error.h"

namespace rnnsearch {

void write_atomically(const std::string& path,
                      const std::function<void(const std::string&)>& write) {
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
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) throw Error(located(tmp, 0, "write failed (disk full?)"));
  });
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(located(path, 0, std::string("cannot open: ") + std::strerror(errno)));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace rnnsearch
