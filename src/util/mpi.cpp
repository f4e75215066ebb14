#include "rnnsearch/util/mpi.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <stdexcept>
#include <thread>
#include <utility>

#include <sys/statvfs.h>

#include "rnnsearch/error.h"

#ifdef RNNSEARCH_MPI
#include <mpi.h>
#endif

namespace rnnsearch::mpi {

void Writer::put(const std::string& text) {
  put(text.size());
  bytes_ += text;
}

void Writer::put(const std::vector<std::string>& texts) {
  put(texts.size());
  for (const std::string& text : texts) put(text);
}

void Reader::get(std::string& text) {
  size_t count = 0;
  get(count);
  text.resize(count);
  if (count) take(text.data(), count);
}

void Reader::get(std::vector<std::string>& texts) {
  size_t count = 0;
  get(count);
  texts.resize(count);
  for (std::string& text : texts) get(text);
}

void Reader::take(void* out, size_t count) {
  if (count > bytes_.size() - offset_) throw std::out_of_range("mpi::Reader: message ends early");
  std::memcpy(out, bytes_.data() + offset_, count);
  offset_ += count;
}

std::optional<bool> environment_switch(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  std::string word(value);
  std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* on : {"1", "true", "yes", "on"})
    if (word == on) return true;
  for (const char* off : {"0", "false", "no", "off"})
    if (word == off) return false;
  throw Error(std::string(name) + " must be 1 or 0 (or true/false, yes/no, on/off), not '" + value + "'");
}

namespace {

// mpirun (Open MPI, MPICH and the PMI(x) launchers) sets these in every rank's environment.
bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name)) return true;
  return false;
}

[[maybe_unused]] bool ring_asked() { return environment_switch("RNNSEARCH_MPI_RING").value_or(false); }

// A shared window Open MPI backs by a file in /dev/shm: on a full tmpfs its pages fault
// with SIGBUS when first touched, long after the allocation succeeded.
[[maybe_unused]] bool dev_shm_has_room(size_t bytes) {
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) != 0) return true;  // not Linux's tmpfs: the MPI's own choice
  return static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize) >= 2.0 * static_cast<double>(bytes);
}

}  // namespace

#ifdef RNNSEARCH_MPI

namespace {

bool g_started = false;  // MPI_Init ran: the process belongs to an mpirun job
int g_rank = 0, g_size = 1;
int g_threads = MPI_THREAD_SINGLE;  // the thread support the MPI provides
bool g_one_host = true;

// MPI counts are ints: long buffers go in slices.
constexpr size_t kSlice = size_t{1} << 30;

template <typename T>
void all_reduce(T* data, size_t count, MPI_Datatype type, MPI_Op op) {
  if (g_size == 1) return;
  for (size_t begin = 0; begin < count; begin += kSlice) {
    const int n = static_cast<int>(std::min(kSlice, count - begin));
    MPI_Allreduce(MPI_IN_PLACE, data + begin, n, type, op, MPI_COMM_WORLD);
  }
}

int checked_int(size_t count) {
  if (count > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw std::length_error("mpi: a message of more than 2^31 - 1 elements");
  return static_cast<int>(count);
}

}  // namespace

void init(int* argc, char*** argv) {
  if (!launched_by_mpirun()) return;
  // OpenMP threads never call MPI; the main thread and the thread of the overlapped
  // exchange (WeightPartition) do, never at the same time.
  MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &g_threads);
  g_started = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  int host_size = 0;
  MPI_Comm_size(host, &host_size);
  MPI_Comm_free(&host);
  g_one_host = host_size == g_size;
}

void finalize() {
  if (g_started) MPI_Finalize();
  g_started = false;
}

bool built_with_mpi() { return true; }
bool serialized_threads() { return g_threads >= MPI_THREAD_SERIALIZED; }
bool one_host() { return g_one_host; }
int rank() { return g_rank; }
int size() { return g_size; }

void sum(double* data, size_t count) { all_reduce(data, count, MPI_DOUBLE, MPI_SUM); }
void max(double* data, size_t count) { all_reduce(data, count, MPI_DOUBLE, MPI_MAX); }

// Ring step s (0 … size − 2) of a reduce-scatter: rank r sends part (r − s − 1) to rank
// r + 1 and adds part (r − s − 2) from rank r − 1 into its own, so that after the last
// step part r has passed every rank and holds their sum. An all-gather step sends part
// (r − s) and receives part (r − s − 1): after size − 1 steps every part is everywhere.
namespace {
int ring_part(int offset) { return ((g_rank + offset) % g_size + g_size) % g_size; }
int part_count(const std::vector<size_t>& bounds, int part) { return checked_int(bounds[part + 1] - bounds[part]); }
}  // namespace

void reduce_scatter_sum(float* data, const std::vector<size_t>& bounds, float* scratch, bool background) {
  if (g_size == 1) return;
  const int next = ring_part(1), previous = ring_part(-1);  // neighbours: rank r ± 1
  for (int s = 0; s < g_size - 1; ++s) {
    const int send = ring_part(-s - 1), receive = ring_part(-s - 2);
    const int count = part_count(bounds, receive);
    if (!background) {
      MPI_Sendrecv(data + bounds[send], part_count(bounds, send), MPI_FLOAT, next, 0, scratch, count, MPI_FLOAT,
                   previous, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {  // each poll moves what has arrived (copies it, on one host); asleep in between
      MPI_Request requests[2];
      MPI_Irecv(scratch, count, MPI_FLOAT, previous, 0, MPI_COMM_WORLD, &requests[0]);
      MPI_Isend(data + bounds[send], part_count(bounds, send), MPI_FLOAT, next, 0, MPI_COMM_WORLD, &requests[1]);
      for (int done = 0;;) {
        MPI_Testall(2, requests, &done, MPI_STATUSES_IGNORE);
        if (done) break;
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
    float* sum = data + bounds[receive];
#pragma omp parallel for simd schedule(static)
    for (int k = 0; k < count; ++k) sum[k] += scratch[k];
  }
}

void all_gather(float* data, const std::vector<size_t>& bounds) {
  if (g_size == 1) return;
  const int next = ring_part(1), previous = ring_part(-1);
  for (int s = 0; s < g_size - 1; ++s) {
    const int send = ring_part(-s), receive = ring_part(-s - 1);
    MPI_Sendrecv(data + bounds[send], part_count(bounds, send), MPI_FLOAT, next, 1, data + bounds[receive],
                 part_count(bounds, receive), MPI_FLOAT, previous, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

void broadcast(std::string& bytes) {
  if (g_size == 1) return;
  unsigned long long length = bytes.size();
  MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  bytes.resize(length);
  MPI_Bcast(bytes.data(), checked_int(length), MPI_CHAR, 0, MPI_COMM_WORLD);
}

void broadcast(std::vector<std::string>& texts) {
  if (g_size == 1) return;
  Writer message;
  message.put(texts);
  std::string bytes = message.bytes();
  broadcast(bytes);
  Reader reader(bytes);
  reader.get(texts);
}

std::vector<std::string> all_gather(const std::string& bytes) {
  if (g_size == 1) return {bytes};
  const int length = checked_int(bytes.size());
  std::vector<int> lengths(g_size), offsets(g_size);
  MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
  size_t total = 0;
  for (int r = 0; r < g_size; ++r) {
    offsets[r] = checked_int(total);
    total += static_cast<size_t>(lengths[r]);
  }
  std::string all(total, '\0');
  MPI_Allgatherv(bytes.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                 MPI_COMM_WORLD);
  std::vector<std::string> parts;
  for (int r = 0; r < g_size; ++r) parts.push_back(all.substr(offsets[r], lengths[r]));
  return parts;
}

void barrier() {
  if (g_size > 1) MPI_Barrier(MPI_COMM_WORLD);
}

constexpr size_t kAlignment = 64;

struct SharedFloats::Window {
  MPI_Comm host = MPI_COMM_NULL;
  MPI_Win win = MPI_WIN_NULL;
};

SharedFloats::SharedFloats(std::unique_ptr<Window> window) : window_(std::move(window)) {}

std::unique_ptr<SharedFloats> SharedFloats::allocate(size_t count) {
  if (g_size == 1) return nullptr;
  const bool ring = ring_asked();  // a bad value is an error before any collective call
  auto window = std::make_unique<Window>();
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &window->host);
  unsigned long long total = count;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  int shared = g_one_host && !ring && dev_shm_has_room(total * sizeof(float)) ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &shared, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!shared) {
    MPI_Comm_free(&window->host);
    return nullptr;
  }
  // The host's ranks keep their world order (key 0: ties keep it), so host rank = world rank.
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");  // each segment on its own pages
  // Open MPI's segments start 264 bytes into a page: each is given 64 bytes more and starts
  // at the next 64-byte boundary, as an AlignedVector (tensor.h: where a vectorised loop
  // splits a buffer must not depend on where it lies, or 2 ranks would round unlike 2 threads).
  const size_t padded = count ? count + kAlignment / sizeof(float) : 0;
  // A host where the MPI cannot make the window (no /dev/shm in a chroot or container, say)
  // falls back to the ring instead of ending the job: errors return on this communicator.
  MPI_Comm_set_errhandler(window->host, MPI_ERRORS_RETURN);
  float* mine = nullptr;
  const int status = MPI_Win_allocate_shared(static_cast<MPI_Aint>(padded * sizeof(float)), sizeof(float), info,
                                             window->host, &mine, &window->win);
  MPI_Info_free(&info);
  MPI_Comm_set_errhandler(window->host, MPI_ERRORS_ARE_FATAL);  // a failed barrier must not pass
  int made = status == MPI_SUCCESS ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &made, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!made) return nullptr;  // (freeing a window some ranks lack would wait forever: left as it is)
  // One passive epoch for the window's life: the ranks load and store, and synchronize()
  // orders their accesses (MPI_Win_sync and a barrier, MPI-3.1 §11.5.5's pattern).
  MPI_Win_lock_all(MPI_MODE_NOCHECK, window->win);
  std::unique_ptr<SharedFloats> floats(new SharedFloats(std::move(window)));
  for (int r = 0; r < g_size; ++r) {
    MPI_Aint size = 0;
    int unit = 0;
    void* base = nullptr;
    MPI_Win_shared_query(floats->window_->win, r, &size, &unit, &base);
    const auto address = reinterpret_cast<std::uintptr_t>(base);
    floats->segments_.push_back(reinterpret_cast<float*>((address + kAlignment - 1) / kAlignment * kAlignment));
  }
  return floats;
}

SharedFloats::~SharedFloats() {
  // Freeing a window is collective: a rank unwinding an exception alone (a checkpoint it
  // could not write) would wait here for the others, which wait for it at the next barrier,
  // and the job would hang instead of ending by main's mpi::abort. The window is left to it.
  if (std::uncaught_exceptions() > 0) return;
  MPI_Win_unlock_all(window_->win);
  MPI_Win_free(&window_->win);
  MPI_Comm_free(&window_->host);
}

void SharedFloats::synchronize() const {
  MPI_Win_sync(window_->win);
  MPI_Barrier(window_->host);
  MPI_Win_sync(window_->win);
}

void abort(int status) {
  if (g_size > 1) MPI_Abort(MPI_COMM_WORLD, status);
  std::exit(status);
}

#else  // a build without MPI: always one process

void init(int*, char***) {
  // N copies that each believe they are alone would train N models into one directory.
  const char* ranks = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (!ranks) ranks = std::getenv("PMI_SIZE");
  if (launched_by_mpirun() && ranks && std::atoi(ranks) > 1) {
    std::fprintf(stderr, "rnnsearch: error: started by mpirun, but this build has no MPI (install libopenmpi-dev "
                         "and rebuild)\n");
    std::exit(2);
  }
}
void finalize() {}
bool built_with_mpi() { return false; }
bool serialized_threads() { return false; }
bool one_host() { return true; }
int rank() { return 0; }
int size() { return 1; }
void sum(double*, size_t) {}
void max(double*, size_t) {}
void reduce_scatter_sum(float*, const std::vector<size_t>&, float*, bool) {}
void all_gather(float*, const std::vector<size_t>&) {}
void broadcast(std::string&) {}
void broadcast(std::vector<std::string>&) {}
std::vector<std::string> all_gather(const std::string& bytes) { return {bytes}; }
void barrier() {}
void abort(int status) { std::exit(status); }

struct SharedFloats::Window {};
std::unique_ptr<SharedFloats> SharedFloats::allocate(size_t) { return nullptr; }
SharedFloats::~SharedFloats() = default;
void SharedFloats::synchronize() const {}

#endif

}  // namespace rnnsearch::mpi
