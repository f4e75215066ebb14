#pragma once
// Progress of long work on standard error, so that a slow run can be told from a hung one
// (translate, score, and train's corpus preparation). Standard output never sees it.
//
// A stage ("translating", "binarizing the training corpus", ...) counts units done:
//   rnnsearch translate: translating: 12000/29000 lines (41.4%), 410.2 lines/s, 0:00:29, eta 0:00:41
// Without a known total the percentage and ETA are left out; a stage that counts nothing
// (a library call such as SentencePiece's training) shows its elapsed time.
//
// On a terminal the line is drawn when a stage starts, then redrawn in place four times a
// second (`live`) and cleared when the stage ends; otherwise a plain
// line is written every `every` seconds, and when a stage that took at least that long ends,
// a last line "STAGE: done, N units in T s". `every` = 0: a line at every add() and at the end of
// every stage. `quiet`: nothing at all; in an MPI job only rank 0 shows anything.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <iosfwd>
#include <mutex>
#include <string>
#include <thread>

namespace rnnsearch {

struct ProgressOptions {
  double every = 30;   // --log-every: seconds between plain lines
  bool quiet = false;  // --quiet
};

class ProgressMeter {
 public:
  // Writes to std::cerr, live when standard error is a terminal.
  ProgressMeter(std::string prefix, const ProgressOptions& options);
  ProgressMeter(std::string prefix, const ProgressOptions& options, std::ostream& out, bool live);
  ~ProgressMeter();  // ends the stage
  ProgressMeter(const ProgressMeter&) = delete;
  ProgressMeter& operator=(const ProgressMeter&) = delete;

  // Starts a stage (ending the one before): `unit` names what add() counts ("" = nothing),
  // `total` is the count at its end (0 = unknown).
  void start(const std::string& stage, const std::string& unit = "", size_t total = 0);
  void add(size_t count);  // any thread
  void finish();           // ends the stage: the live line is cleared
  // A line of its own (a warning) that the live line must not overwrite.
  void message(const std::string& line);
  // Clears the live line, e.g. before output goes to a terminal that also shows it.
  void clear();

 private:
  void tick();                       // the ticker thread's loop
  std::string line_locked() const;   // the current stage's line
  void draw_locked();                // writes it (live: in place)
  void clear_locked();

  const std::string prefix_;
  const ProgressOptions options_;
  std::ostream& out_;
  const bool live_;
  std::mutex mutex_;                 // guards everything below and the writes to out_
  std::condition_variable wake_;
  std::thread ticker_;
  bool stopping_ = false;
  bool active_ = false;              // a stage is running
  bool drawn_ = false;               // the live line is on screen
  std::string stage_, unit_;
  size_t total_ = 0;
  std::atomic<size_t> done_{0};
  std::chrono::steady_clock::time_point started_, last_line_;
};

// "H:MM:SS"
std::string clock_text(double seconds);

}  // namespace rnnsearch
