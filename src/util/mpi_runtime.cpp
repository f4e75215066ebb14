// librnnsearch_mpi.so: the MPI calls of util/mpi.h (util/mpi_runtime.h says why they live in a
// module). mpi.cpp answers for one rank itself; every call here comes with more than one,
// except init and finalize.
#include "rnnsearch/util/mpi_runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <thread>

#include <mpi.h>
#include <sys/statvfs.h>

namespace rnnsearch::mpi {
namespace {

bool g_started = false;  // MPI_Init ran
int g_rank = 0, g_size = 1;
bool g_one_host = true;

// MPI counts are ints: long buffers go in slices.
constexpr size_t kSlice = size_t{1} << 30;

template <typename T>
void all_reduce(T* data, size_t count, MPI_Datatype type, MPI_Op op) {
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

// A shared window Open MPI backs by a file in /dev/shm: on a full tmpfs its pages fault
// with SIGBUS when first touched, long after the allocation succeeded.
bool dev_shm_has_room(size_t bytes) {
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) != 0) return true;  // not Linux's tmpfs: the MPI's own choice
  return static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize) >= 2.0 * static_cast<double>(bytes);
}

void init(int* argc, char*** argv, int* rank, int* size, bool* one_host, bool* serialized_threads) {
  // OpenMP threads never call MPI; the main thread and the thread of the overlapped
  // exchange (WeightPartition) do, never at the same time.
  int threads = MPI_THREAD_SINGLE;
  MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &threads);
  g_started = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  int host_size = 0;
  MPI_Comm_size(host, &host_size);
  MPI_Comm_free(&host);
  g_one_host = host_size == g_size;
  *rank = g_rank;
  *size = g_size;
  *one_host = g_one_host;
  *serialized_threads = threads >= MPI_THREAD_SERIALIZED;
}

void finalize() {
  if (g_started) MPI_Finalize();
  g_started = false;
}

void sum(double* data, size_t count) { all_reduce(data, count, MPI_DOUBLE, MPI_SUM); }
void max(double* data, size_t count) { all_reduce(data, count, MPI_DOUBLE, MPI_MAX); }

// Ring step s (0 … size − 2) of a reduce-scatter: rank r sends part (r − s − 1) to rank
// r + 1 and adds part (r − s − 2) from rank r − 1 into its own, so that after the last
// step part r has passed every rank and holds their sum. An all-gather step sends part
// (r − s) and receives part (r − s − 1): after size − 1 steps every part is everywhere.
int ring_part(int offset) { return ((g_rank + offset) % g_size + g_size) % g_size; }
int part_count(const std::vector<size_t>& bounds, int part) { return checked_int(bounds[part + 1] - bounds[part]); }

void reduce_scatter_sum(float* data, const std::vector<size_t>& bounds, float* scratch, bool background) {
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

void all_gather_floats(float* data, const std::vector<size_t>& bounds) {
  const int next = ring_part(1), previous = ring_part(-1);
  for (int s = 0; s < g_size - 1; ++s) {
    const int send = ring_part(-s), receive = ring_part(-s - 1);
    MPI_Sendrecv(data + bounds[send], part_count(bounds, send), MPI_FLOAT, next, 1, data + bounds[receive],
                 part_count(bounds, receive), MPI_FLOAT, previous, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

void broadcast(std::string& bytes) {
  unsigned long long length = bytes.size();
  MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  bytes.resize(length);
  MPI_Bcast(bytes.data(), checked_int(length), MPI_CHAR, 0, MPI_COMM_WORLD);
}

std::vector<std::string> all_gather(const std::string& bytes) {
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

void barrier() { MPI_Barrier(MPI_COMM_WORLD); }

constexpr size_t kAlignment = 64;

struct Window {
  MPI_Comm host = MPI_COMM_NULL;
  MPI_Win win = MPI_WIN_NULL;
};

void* window_allocate(size_t count, bool ring, std::vector<float*>& segments) {
  auto* window = new Window;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &window->host);
  unsigned long long total = count;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  int shared = g_one_host && !ring && dev_shm_has_room(total * sizeof(float)) ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &shared, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!shared) {
    MPI_Comm_free(&window->host);
    delete window;
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
  if (!made) {  // (freeing a window some ranks lack would wait forever: left as it is)
    delete window;
    return nullptr;
  }
  // One passive epoch for the window's life: the ranks load and store, and synchronize()
  // orders their accesses (MPI_Win_sync and a barrier, MPI-3.1 §11.5.5's pattern).
  MPI_Win_lock_all(MPI_MODE_NOCHECK, window->win);
  segments.clear();
  for (int r = 0; r < g_size; ++r) {
    MPI_Aint size = 0;
    int unit = 0;
    void* base = nullptr;
    MPI_Win_shared_query(window->win, r, &size, &unit, &base);
    const auto address = reinterpret_cast<std::uintptr_t>(base);
    segments.push_back(reinterpret_cast<float*>((address + kAlignment - 1) / kAlignment * kAlignment));
  }
  return window;
}

void window_free(void* handle) {
  auto* window = static_cast<Window*>(handle);
  MPI_Win_unlock_all(window->win);
  MPI_Win_free(&window->win);
  MPI_Comm_free(&window->host);
  delete window;
}

void window_synchronize(void* handle) {
  const auto* window = static_cast<const Window*>(handle);
  MPI_Win_sync(window->win);
  MPI_Barrier(window->host);
  MPI_Win_sync(window->win);
}

void abort(int status) { MPI_Abort(MPI_COMM_WORLD, status); }

constexpr Runtime kRuntime{kRuntimeAbi,       sizeof(Runtime), init,       finalize, sum,
                           max,               reduce_scatter_sum, all_gather_floats, broadcast, all_gather,
                           barrier,           window_allocate, window_free, window_synchronize, abort};

}  // namespace
}  // namespace rnnsearch::mpi

extern "C" __attribute__((visibility("default"))) const rnnsearch::mpi::Runtime* rnnsearch_mpi_runtime() {
  return &rnnsearch::mpi::kRuntime;
}
