#pragma once
// Every file a run writes goes to "PATH.tmp.PID" first and is renamed into place, so a
// crash or kill never leaves a half-written model, vocabulary or log behind.
#include <functional>
#include <string>

namespace rnnsearch {

// Calls write(tmp_path), then fsyncs and renames tmp_path to path. On any exception the
// temporary file is removed and the exception propagates.
void write_atomically(const std::string& path, const std::function<void(const std::string&)>& write);

// Convenience: writes `content` to `path` atomically.
void write_file_atomically(const std::string& path, const std::string& content);

std::string read_file(const std::string& path);  // throws rnnsearch::Error if unreadable

}  // namespace rnnsearch
