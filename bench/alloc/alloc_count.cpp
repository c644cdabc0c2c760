// An LD_PRELOAD library that counts a process's heap allocations (malloc, calloc, realloc, the
// aligned ones; operator new and OpenSSL's allocations end in these) and, at exit, writes the
// count to the file named by PQOT_ALLOC_COUNT_FILE. Used by bench/callgrind/srmcp_requests.sh
// (mode `allocs`) to count allocations per request; never linked into pqot's own binaries.
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>

extern "C" {
// glibc's own implementations, which the wrappers below forward to.
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t n, std::size_t size);
void* __libc_realloc(void* p, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
}

namespace {

std::atomic<unsigned long long> allocations{0};

void count() noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
}

__attribute__((destructor)) void report() {
  const char* path = std::getenv("PQOT_ALLOC_COUNT_FILE");
  if (path == nullptr) return;
  const unsigned long long n = allocations.load();
  if (std::FILE* f = std::fopen(path, "w")) {
    std::fprintf(f, "%llu\n", n);
    std::fclose(f);
  }
}

}  // namespace

extern "C" {

void* malloc(std::size_t size) {
  count();
  return __libc_malloc(size);
}
void* calloc(std::size_t n, std::size_t size) {
  count();
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t size) {
  count();
  return __libc_realloc(p, size);
}
void* memalign(std::size_t alignment, std::size_t size) {
  count();
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(std::size_t alignment, std::size_t size) {
  count();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  count();
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

}  // extern "C"
