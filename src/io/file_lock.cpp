#include "rnnsearch/io/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "rnnsearch/error.h"

namespace rnnsearch {

FileLock::FileLock(const std::string& path, const std::string& holder) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(located(path, 0, std::string("cannot create lock file: ") + std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  const int error = errno;
  ::close(fd_);
  fd_ = -1;
  if (error == EWOULDBLOCK) throw Error(located(path, 0, "locked: " + holder));
  throw Error(located(path, 0, std::string("cannot lock: ") + std::strerror(error)));
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace rnnsearch
