#pragma once
// The MPI calls behind util/mpi.h, in a module of their own: librnnsearch_mpi.so, beside the
// rnnsearch binary, which util/mpi.cpp loads (dlopen) only when mpirun started the process. A
// plain run loads no MPI library at all: Debian 13's Open MPI 5 pulls in PSM2, libfabric and
// UCX, whose start-up cost every command 0.25 s before a line was read.
//
// The module is built from src/util/mpi_runtime.cpp alone and uses nothing of the library:
// what needs the library (environment switches, errors) is decided by mpi.cpp and passed in.
// Each entry is called only with more than one rank, except init and finalize.
#include <cstddef>
#include <string>
#include <vector>

namespace rnnsearch::mpi {

// The table's layout: bumped whenever Runtime changes, so that a module of another build (a
// binary copied over an older install, a stale build folder) is refused with a message, not
// called through a table it does not have.
constexpr int kRuntimeAbi = 1;

struct Runtime {
  int abi;      // kRuntimeAbi of the module's build
  size_t size;  // sizeof(Runtime) there
  // MPI_Init_thread (MPI_THREAD_SERIALIZED), then the group's answers.
  void (*init)(int* argc, char*** argv, int* rank, int* size, bool* one_host, bool* serialized_threads);
  void (*finalize)();
  void (*sum)(double* data, size_t count);
  void (*max)(double* data, size_t count);
  void (*reduce_scatter_sum)(float* data, const std::vector<size_t>& bounds, float* scratch, bool background);
  void (*all_gather_floats)(float* data, const std::vector<size_t>& bounds);
  void (*broadcast)(std::string& bytes);
  std::vector<std::string> (*all_gather)(const std::string& bytes);
  void (*barrier)();
  // SharedFloats::allocate's window (collective): null when any rank cannot share (ring: the
  // ring was asked for), else the window, and `segments` each rank's floats.
  void* (*window_allocate)(size_t count, bool ring, std::vector<float*>& segments);
  void (*window_free)(void* window);
  void (*window_synchronize)(void* window);
  void (*abort)(int status);  // MPI_Abort: ends every rank
};

}  // namespace rnnsearch::mpi

// The module's one symbol: its table of calls.
extern "C" const rnnsearch::mpi::Runtime* rnnsearch_mpi_runtime();
