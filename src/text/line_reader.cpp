#include "rnnsearch/text/line_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>

#include "rnnsearch/error.h"
#include "rnnsearch/text/tokenizer.h"

namespace rnnsearch {
namespace {

// Opens a file for gzread, which decompresses gzip content and passes anything else through
// unchanged. The descriptor is opened here rather than by gzopen so that a directory is
// refused up front and errno is reliable for the message.
gzFile open_gz(const std::string& path) {
  auto fail = [&](int error) {
    return Error(located(path, 0, std::string("cannot open: ") + std::strerror(error)));
  };
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw fail(errno);
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw fail(EISDIR);
  }
  gzFile file = ::gzdopen(fd, "rb");
  if (!file) {
    ::close(fd);
    throw fail(ENOMEM);  // gzdopen fails only when it cannot allocate its state
  }
  ::gzbuffer(file, 1 << 17);
  return file;
}

}  // namespace

struct LineReader::Impl {
  gzFile file = nullptr;  // null for standard input
  std::vector<char> buffer = std::vector<char>(1 << 16);
  size_t pos = 0, end = 0;  // unread bytes are buffer[pos, end)

  // Refills the buffer; false at the end of the input. Throws on a read error or a
  // truncated gzip stream (which gzread itself reports only as an end of file).
  bool fill(const std::string& path, size_t line) {
    if (!file) return fill_from_stdin(path, line);
    int n = ::gzread(file, buffer.data(), static_cast<unsigned>(buffer.size()));
    int error = Z_OK;
    const char* message = ::gzerror(file, &error);
    if (n < 0 || (n == 0 && error != Z_OK)) {
      std::string what = error == Z_ERRNO ? std::strerror(errno)
                         : error == Z_BUF_ERROR ? "truncated gzip file"
                                                : message;
      throw Error(located(path, line, "cannot read: " + what));
    }
    pos = 0;
    end = static_cast<size_t>(n);
    return n > 0;
  }

  // Standard input is read with read(2), not gzread: gzread keeps reading until its 64 KB
  // request is filled, which would hold back a pipeline that sends one line at a time. A
  // failed read (stdin a directory, an I/O error) is an error, not an end of input.
  bool fill_from_stdin(const std::string& path, size_t line) {
    // What is written so far goes out before waiting for more input, as std::cin's tie to
    // std::cout did: a pipeline sees each line's result as soon as the line is read. (A failed
    // write leaves std::cout bad, which the command's final flush reports.)
    std::cout.flush();
    ssize_t n;
    do n = ::read(STDIN_FILENO, buffer.data(), buffer.size());
    while (n < 0 && errno == EINTR);
    if (n < 0) throw Error(located(path == "-" ? "stdin" : path, line, std::string("cannot read: ") + std::strerror(errno)));
    pos = 0;
    end = static_cast<size_t>(n);
    return n > 0;
  }
};

LineReader::LineReader(const std::string& path) : impl_(std::make_unique<Impl>()), path_(path) {
  if (path != "-") impl_->file = open_gz(path);
}

LineReader::~LineReader() {
  if (impl_->file) ::gzclose(impl_->file);
}

bool LineReader::next(std::string& line) {
  line.clear();
  bool got_bytes = false;
  for (;;) {
    if (impl_->pos == impl_->end && !impl_->fill(path_, line_number_ + 1)) {
      if (!got_bytes) return false;
      break;  // a last line without "\n"
    }
    const char* begin = impl_->buffer.data() + impl_->pos;
    const char* stop = impl_->buffer.data() + impl_->end;
    const char* newline = std::find(begin, stop, '\n');
    line.append(begin, newline);
    got_bytes = true;
    impl_->pos = static_cast<size_t>(newline - impl_->buffer.data());
    if (newline != stop) {
      ++impl_->pos;  // consume the "\n"
      if (!line.empty() && line.back() == '\r') line.pop_back();
      break;
    }
  }
  ++line_number_;
  return true;
}

bool next_valid_line(LineReader& reader, std::string& line) {
  if (!reader.next(line)) return false;
  if (!is_valid_utf8(line)) throw Error(located(reader.path(), reader.line_number(), "invalid UTF-8"));
  return true;
}

size_t count_lines_of_file(const std::string& path) {
  struct stat st;
  if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  LineReader reader(path);
  std::string line;
  while (reader.next(line)) {
  }
  return reader.line_number();
}

std::vector<std::string> read_lines(const std::string& path) {
  LineReader reader(path);
  std::vector<std::string> lines;
  std::string line;
  while (next_valid_line(reader, line)) lines.push_back(line);
  return lines;
}

}  // namespace rnnsearch
