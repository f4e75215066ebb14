#include "rnnsearch/util/mpi.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

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

namespace {

// mpirun (Open MPI, MPICH and the PMI(x) launchers) sets these in every rank's environment.
bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(name)) return true;
  return false;
}

}  // namespace

#ifdef RNNSEARCH_MPI

namespace {

bool g_started = false;  // MPI_Init ran: the process belongs to an mpirun job
int g_rank = 0, g_size = 1;

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
  int provided = 0;
  // Only the main thread calls MPI (OpenMP threads never do).
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  g_started = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
}

void finalize() {
  if (g_started) MPI_Finalize();
  g_started = false;
}

bool built_with_mpi() { return true; }
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

void reduce_scatter_sum(float* data, const std::vector<size_t>& bounds, float* scratch) {
  if (g_size == 1) return;
  const int next = ring_part(1), previous = ring_part(-1);  // neighbours: rank r ± 1
  for (int s = 0; s < g_size - 1; ++s) {
    const int send = ring_part(-s - 1), receive = ring_part(-s - 2);
    const int count = part_count(bounds, receive);
    MPI_Sendrecv(data + bounds[send], part_count(bounds, send), MPI_FLOAT, next, 0, scratch, count, MPI_FLOAT,
                 previous, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
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
int rank() { return 0; }
int size() { return 1; }
void sum(double*, size_t) {}
void max(double*, size_t) {}
void reduce_scatter_sum(float*, const std::vector<size_t>&, float*) {}
void all_gather(float*, const std::vector<size_t>&) {}
void broadcast(std::string&) {}
void broadcast(std::vector<std::string>&) {}
std::vector<std::string> all_gather(const std::string& bytes) { return {bytes}; }
void barrier() {}
void abort(int status) { std::exit(status); }

#endif

}  // namespace rnnsearch::mpi
