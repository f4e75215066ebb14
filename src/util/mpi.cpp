#include "rnnsearch/util/mpi.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <stdexcept>
#include <utility>

#include "rnnsearch/error.h"

#ifdef RNNSEARCH_MPI
#include <dlfcn.h>
#include <unistd.h>

#include "rnnsearch/util/mpi_runtime.h"
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

}  // namespace

#ifdef RNNSEARCH_MPI

namespace {

const Runtime* g_mpi = nullptr;  // the loaded module: the process belongs to an mpirun job
int g_rank = 0, g_size = 1;
bool g_serialized = false;  // the MPI provides MPI_THREAD_SERIALIZED
bool g_one_host = true;

[[noreturn]] void module_error(const std::string& problem) {
  std::fprintf(stderr, "rnnsearch: error: started by mpirun, but the MPI module cannot be loaded: %s\n",
               problem.c_str());
  std::exit(2);
}

// librnnsearch_mpi.so from the binary's own folder (the build puts it beside rnnsearch), never
// from elsewhere: the working directory is not searched.
const Runtime* load_runtime() {
  std::vector<char> path(4096);
  const ssize_t length = readlink("/proc/self/exe", path.data(), path.size());
  if (length <= 0 || static_cast<size_t>(length) >= path.size())
    module_error("the binary's own path cannot be read (/proc/self/exe)");
  const std::string exe(path.data(), static_cast<size_t>(length));
  const std::string module = exe.substr(0, exe.rfind('/')) + "/librnnsearch_mpi.so";
  // RTLD_GLOBAL: the MPI's own plugins, loaded by MPI_Init, look for its symbols there.
  void* handle = dlopen(module.c_str(), RTLD_NOW | RTLD_GLOBAL);
  const auto entry = handle ? reinterpret_cast<const Runtime* (*)()>(dlsym(handle, "rnnsearch_mpi_runtime")) : nullptr;
  if (!entry) {
    const char* why = dlerror();
    module_error(why ? why : module + " has no rnnsearch_mpi_runtime");
  }
  const Runtime* runtime = entry();
  if (runtime->abi != kRuntimeAbi || runtime->size != sizeof(Runtime))
    module_error(module + " is of another rnnsearch build (its table: layout " + std::to_string(runtime->abi) + ", " +
                 std::to_string(runtime->size) + " bytes; this binary's: " + std::to_string(kRuntimeAbi) + ", " +
                 std::to_string(sizeof(Runtime)) + "): build them together");
  return runtime;
}

}  // namespace

void init(int* argc, char*** argv) {
  if (!launched_by_mpirun()) return;
  g_mpi = load_runtime();
  g_mpi->init(argc, argv, &g_rank, &g_size, &g_one_host, &g_serialized);
}

void finalize() {
  if (g_mpi) g_mpi->finalize();
}

bool built_with_mpi() { return true; }
bool serialized_threads() { return g_serialized; }
bool one_host() { return g_one_host; }
int rank() { return g_rank; }
int size() { return g_size; }

void sum(double* data, size_t count) {
  if (g_size > 1) g_mpi->sum(data, count);
}
void max(double* data, size_t count) {
  if (g_size > 1) g_mpi->max(data, count);
}
void reduce_scatter_sum(float* data, const std::vector<size_t>& bounds, float* scratch, bool background) {
  if (g_size > 1) g_mpi->reduce_scatter_sum(data, bounds, scratch, background);
}
void all_gather(float* data, const std::vector<size_t>& bounds) {
  if (g_size > 1) g_mpi->all_gather_floats(data, bounds);
}
void broadcast(std::string& bytes) {
  if (g_size > 1) g_mpi->broadcast(bytes);
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
  return g_mpi->all_gather(bytes);
}

void barrier() {
  if (g_size > 1) g_mpi->barrier();
}

// The window itself is the module's (mpi_runtime.cpp): here, its handle.
struct SharedFloats::Window {
  void* handle = nullptr;
};

SharedFloats::SharedFloats(std::unique_ptr<Window> window) : window_(std::move(window)) {}

std::unique_ptr<SharedFloats> SharedFloats::allocate(size_t count) {
  if (g_size == 1) return nullptr;
  const bool ring = ring_asked();  // a bad value is an error before any collective call
  std::vector<float*> segments;
  void* handle = g_mpi->window_allocate(count, ring, segments);
  if (!handle) return nullptr;
  std::unique_ptr<SharedFloats> floats(new SharedFloats(std::make_unique<Window>(Window{handle})));
  floats->segments_ = std::move(segments);
  return floats;
}

SharedFloats::~SharedFloats() {
  // Freeing a window is collective: a rank unwinding an exception alone (a checkpoint it
  // could not write) would wait here for the others, which wait for it at the next barrier,
  // and the job would hang instead of ending by main's mpi::abort. The window is left to it.
  if (std::uncaught_exceptions() > 0) return;
  g_mpi->window_free(window_->handle);
}

void SharedFloats::synchronize() const { g_mpi->window_synchronize(window_->handle); }

void abort(int status) {
  if (g_size > 1) g_mpi->abort(status);
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
