#include "rnnsearch/util/progress_meter.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "rnnsearch/util/mpi.h"

namespace rnnsearch {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kLivePeriod = std::chrono::milliseconds(250);

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

std::string clock_text(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  return buffer;
}

ProgressMeter::ProgressMeter(std::string prefix, const ProgressOptions& options)
    : ProgressMeter(std::move(prefix), options, std::cerr, ::isatty(STDERR_FILENO) == 1) {}

ProgressMeter::ProgressMeter(std::string prefix, const ProgressOptions& options, std::ostream& out, bool live)
    : prefix_(std::move(prefix)), options_{options.every, options.quiet || !mpi::is_root()}, out_(out), live_(live) {
  // Plain lines at every add() need no clock; otherwise one thread wakes for the lines.
  if (!options_.quiet && (live_ || options_.every > 0)) ticker_ = std::thread([this] { tick(); });
}

ProgressMeter::~ProgressMeter() {
  finish();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

void ProgressMeter::start(const std::string& stage, const std::string& unit, size_t total) {
  finish();
  std::lock_guard<std::mutex> lock(mutex_);
  stage_ = stage;
  unit_ = unit;
  total_ = total;
  done_ = 0;
  started_ = last_line_ = Clock::now();
  active_ = true;
  if (live_ && !options_.quiet) draw_locked();  // on a terminal the line shows at once
  wake_.notify_all();
}

void ProgressMeter::add(size_t count) {
  done_ += count;
  if (options_.quiet || live_ || options_.every > 0) return;
  std::lock_guard<std::mutex> lock(mutex_);  // --log-every 0: a line at every step
  if (active_) draw_locked();
}

void ProgressMeter::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!active_) return;
  active_ = false;
  if (options_.quiet) return;
  const double seconds = seconds_since(started_);
  if (live_) {
    clear_locked();
  } else if (seconds >= options_.every) {
    char took[32];
    std::snprintf(took, sizeof took, "%.1f", seconds);
    out_ << prefix_ + ": " + stage_ + ": done" + (unit_.empty() ? "" : ", " + std::to_string(done_.load()) + " " + unit_) +
                " in " + took + " s\n"
         << std::flush;
  }
}

void ProgressMeter::message(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  clear_locked();
  out_ << line + "\n" << std::flush;  // redrawn at the next tick
}

void ProgressMeter::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  clear_locked();
}

void ProgressMeter::tick() {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto period = live_ ? std::chrono::duration_cast<Clock::duration>(kLivePeriod)
                            : std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.every));
  while (!stopping_) {
    if (!active_) {
      wake_.wait(lock);  // until a stage starts
      continue;
    }
    wake_.wait_until(lock, live_ ? Clock::now() + period : last_line_ + period);
    if (!stopping_ && active_ && (live_ || Clock::now() >= last_line_ + period)) draw_locked();
  }
}

std::string ProgressMeter::line_locked() const {
  const double seconds = seconds_since(started_);
  const size_t done = done_.load();
  std::string text = prefix_ + ": " + stage_ + ": ";
  char buffer[160];
  if (!unit_.empty()) {
    if (total_ > 0) {
      std::snprintf(buffer, sizeof buffer, "%zu/%zu %s (%.1f%%), ", done, total_, unit_.c_str(),
                    100.0 * static_cast<double>(done) / static_cast<double>(total_));
    } else {
      std::snprintf(buffer, sizeof buffer, "%zu %s, ", done, unit_.c_str());
    }
    text += buffer;
    std::snprintf(buffer, sizeof buffer, "%.1f %s/s, ", seconds > 0 ? done / seconds : 0.0, unit_.c_str());
    text += buffer;
  }
  text += clock_text(seconds);
  if (!unit_.empty() && total_ > 0 && done > 0 && done <= total_)
    text += ", eta " + clock_text(seconds * static_cast<double>(total_ - done) / static_cast<double>(done));
  return text;
}

void ProgressMeter::draw_locked() {
  last_line_ = Clock::now();
  if (live_) {
    out_ << "\r\033[K" + line_locked() << std::flush;
    drawn_ = true;
  } else {
    out_ << line_locked() + "\n" << std::flush;
  }
}

void ProgressMeter::clear_locked() {
  if (!drawn_) return;
  out_ << "\r\033[K" << std::flush;
  drawn_ = false;
}

}  // namespace rnnsearch
