#pragma once
// End-to-end tests run the rnnsearch binary as a user does, through a shell, and look at its
// exit status, standard output and standard error. RNNSEARCH_BINARY is the command
// (CMakeLists.txt defines it for each test; in a cross build it runs through the emulator).
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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

// Runs `COMMAND` through the shell with its standard error a pseudo-terminal (what a user
// watching it sees, "\r" and escape sequences included, in err) and its standard output in
// dir's stdout.txt. -1 as the status if the terminal could not be made.
inline BinaryRun run_shell_on_terminal(const std::string& command, const TempDir& dir) {
  int terminal = -1, child_side = -1;
  if (::openpty(&terminal, &child_side, nullptr, nullptr, nullptr) != 0) return {-1, "", "openpty failed"};
  const std::string shell_command = command + " >" + dir.path("stdout.txt");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(terminal);
    ::dup2(child_side, STDERR_FILENO);
    ::close(child_side);
    ::execl("/bin/sh", "sh", "-c", shell_command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(child_side);
  std::string err;
  char buffer[4096];
  for (;;) {  // until the child's side is closed (EIO) or the fork failed
    const ssize_t n = ::read(terminal, buffer, sizeof buffer);
    if (n > 0) err.append(buffer, static_cast<size_t>(n));
    else if (n < 0 && errno == EINTR) continue;
    else break;
  }
  ::close(terminal);
  int raw = 0;
  if (pid < 0 || ::waitpid(pid, &raw, 0) != pid) return {-1, "", err};
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, dir.read("stdout.txt"), err};
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
