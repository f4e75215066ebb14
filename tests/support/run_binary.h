#pragma once
// End-to-end tests run the rnnsearch binary as a user does, through a shell, and look at its
// exit status, standard output and standard error. RNNSEARCH_BINARY is the command
// (CMakeLists.txt defines it for each test; in a cross build it runs through the emulator).
#include <sys/wait.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "temp_dir.h"

namespace rnnsearch::test {

struct BinaryRun {
  int status;  // the exit status; -1 if ended by a signal
  std::string out, err;
};

// Runs `COMMAND` through the shell, its output in files of dir (stdout.txt, stderr.txt).
inline BinaryRun run_shell(const std::string& command, const TempDir& dir) {
  const std::string out = dir.path("stdout.txt"), err = dir.path("stderr.txt");
  const int raw = std::system((command + " >" + out + " 2>" + err).c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, dir.read("stdout.txt"), dir.read("stderr.txt")};
}

// Runs `rnnsearch ARGUMENTS`; standard input from stdin_file when given; `environment`
// ("NAME=value ...") set for it alone.
inline BinaryRun run_binary(const std::string& arguments, const TempDir& dir, const std::string& stdin_file = "",
                            const std::string& environment = "") {
  std::string command = (environment.empty() ? "" : "env " + environment + " ") + std::string(RNNSEARCH_BINARY) +
                        " " + arguments;
  if (!stdin_file.empty()) command += " <" + stdin_file;
  return run_shell(command, dir);
}

// The lines of a text, without their '\n'.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The words of a text, split at white space.
inline std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

}  // namespace rnnsearch::test
