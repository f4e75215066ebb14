#pragma once
// Reads a text file line by line: plain or gzip-compressed (detected from the content, so
// corpora/multi30k/*.gz are read as they are shipped), or standard input for "-" (plain
// text, handed over line by line as it arrives, so pipelines stream).
// Line endings "\n" and "\r\n" are stripped.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace rnnsearch {

class LineReader {
 public:
  explicit LineReader(const std::string& path);  // throws rnnsearch::Error if unreadable
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  bool next(std::string& line);                  // false at end of file
  size_t line_number() const { return line_number_; }  // 1-based number of the last line read
  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
  size_t line_number_ = 0;
};

// reader.next(line), then throws rnnsearch::Error "FILE:LINE: invalid UTF-8" on bad bytes.
bool next_valid_line(LineReader& reader, std::string& line);

// The number of lines of a regular file (plain or gzipped), read once to count them; 0 for
// standard input ("-") and anything else that cannot be read twice (a pipe, a terminal).
size_t count_lines_of_file(const std::string& path);

// All lines of a file; throws rnnsearch::Error "FILE:LINE: invalid UTF-8" on bad bytes.
std::vector<std::string> read_lines(const std::string& path);

}  // namespace rnnsearch
