#pragma once
// The group of processes one run is spread over (docs/design.md §7): one process without
// `mpirun`, N ranks under `mpirun -np N`. Training splits each batch across the ranks and
// sums their gradients (ShardedModel); translation, scoring and validation BLEU split the
// batches of a chunk and gather the results (Translator, Scorer).
//
// Only the main thread calls these, outside OpenMP regions; the one exception is
// reduce_scatter_sum on the thread that WeightPartition starts to overlap the exchange with
// the backward pass, while the main thread calls nothing (MPI_THREAD_SERIALIZED); the
// answers fixed by init (rank, size, serialized_threads, one_host) any thread may read. Without
// MPI (a build without it, or a process not started by mpirun) the group has one rank and
// every operation below is a no-op, so single-process code pays nothing.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace rnnsearch::mpi {

// Joins the MPI job when the process was started by mpirun (MPI is not started otherwise:
// a plain run needs no MPI runtime). Call first thing in main.
void init(int* argc, char*** argv);
void finalize();  // after the last collective operation

bool built_with_mpi();
// An on/off switch in the environment (RNNSEARCH_MPI_RING, RNNSEARCH_MPI_OVERLAP): nullopt when
// unset or empty; 1/0, true/false, yes/no, on/off in any case (the words Boost.Program_options
// takes for a bool, as in `train --config`; the library does not link Boost); anything else is
// an Error naming the variable and its value.
std::optional<bool> environment_switch(const char* name);
// The MPI lets another thread than the main one call it, one at a time
// (MPI_THREAD_SERIALIZED): WeightPartition's overlapped exchange needs it.
bool serialized_threads();
// All the ranks run on this host (every rank gets the same answer).
bool one_host();
int rank();  // 0 .. size() - 1
int size();
inline bool is_root() { return rank() == 0; }

// Element-wise, over all ranks, in place; every rank receives the same result.
void sum(double* data, size_t count);
void max(double* data, size_t count);

// The two halves of an allreduce, for a vector cut into one part per rank (bounds: size() + 1
// offsets, part r = [bounds[r], bounds[r + 1])), each a ring of size() − 1 exchanges with the
// neighbours, so a rank sends and receives (size() − 1) / size() of the vector per call:
// - reduce_scatter_sum: this rank's part becomes the element-wise sum over all ranks; the
//   other parts are left holding partial sums. scratch: room for the largest part.
// - all_gather: every rank's part of data to every rank, in place.
// In the background (on WeightPartition's thread, while the cores compute), reduce_scatter_sum
// sleeps between polls of its messages instead of the MPI's busy wait.
void reduce_scatter_sum(float* data, const std::vector<size_t>& bounds, float* scratch, bool background = false);
void all_gather(float* data, const std::vector<size_t>& bounds);

// Floats every rank of the job reads and writes in place: an MPI-3 shared-memory window
// (MPI_Win_allocate_shared), when all the ranks run on one host. Each rank gives its count
// (0 is fine) and sees every rank's segment, each on a 64-byte boundary.
class SharedFloats {
 public:
  // Collective. Null, and every rank takes the same answer, with one rank, in a build
  // without MPI, when the ranks span several hosts, when /dev/shm (where Open MPI keeps the
  // window; a container's is often 64 MB) has less than twice the window's size free, when
  // the MPI fails to make the window, or when RNNSEARCH_MPI_RING=1 asks for the exchange
  // of several hosts on one.
  static std::unique_ptr<SharedFloats> allocate(size_t count);
  ~SharedFloats();
  SharedFloats(const SharedFloats&) = delete;
  SharedFloats& operator=(const SharedFloats&) = delete;

  float* segment(int rank) const { return segments_[static_cast<size_t>(rank)]; }
  // A barrier of the ranks after which each sees what all wrote into the window before it.
  void synchronize() const;

 private:
  struct Window;
  explicit SharedFloats(std::unique_ptr<Window> window);
  std::unique_ptr<Window> window_;
  std::vector<float*> segments_;
};

void broadcast(std::string& bytes);                              // rank 0's bytes everywhere
void broadcast(std::vector<std::string>& texts);                 // rank 0's lines everywhere
std::vector<std::string> all_gather(const std::string& bytes);  // every rank's, in rank order
void barrier();

// Ends every rank of the job with this exit status: a rank that fails alone must not leave
// the others waiting forever in a collective operation.
[[noreturn]] void abort(int status);

// Appends and reads plain values (trivially copyable), strings and vectors of them: the
// messages ranks exchange. A reader throws std::out_of_range past the end.
class Writer {
 public:
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "a plain value, a string, or a vector of them");
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  template <typename T>
  void put(const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>, "a vector of plain values");
    put(values.size());
    if (!values.empty()) bytes_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
  }
  void put(const std::string& text);
  void put(const std::vector<std::string>& texts);
  // message(a)(b)(c): put a, b and c; a Reader reads them back with the same expression.
  template <typename T>
  Writer& operator()(const T& value) {
    put(value);
    return *this;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  template <typename T>
  void get(T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "a plain value, a string, or a vector of them");
    take(&value, sizeof value);
  }
  template <typename T>
  void get(std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>, "a vector of plain values");
    size_t count = 0;
    get(count);
    values.resize(count);
    if (count) take(values.data(), count * sizeof(T));
  }
  void get(std::string& text);
  void get(std::vector<std::string>& texts);
  template <typename T>
  Reader& operator()(T& value) {
    get(value);
    return *this;
  }
  bool done() const { return offset_ == bytes_.size(); }

 private:
  void take(void* out, size_t count);
  const std::string& bytes_;
  size_t offset_ = 0;
};

}  // namespace rnnsearch::mpi
