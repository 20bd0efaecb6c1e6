// Maps the dense copy of a ScaLAPACK submatrix: a memfd shared through /proc/<pid>/fd (no /dev/shm, whose size
// containers often cap), or private anonymous memory.
#include "scalapack/dense_copy.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

namespace blasoffload::scalapack {

bool DenseCopy::create(std::size_t bytes) {
  release();
  bytes_ = bytes;
  const int fd = memfd_create("blasoffload-scalapack", MFD_CLOEXEC);
  if (fd >= 0 && ftruncate(fd, off_t(bytes)) == 0) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p != MAP_FAILED) {
      p_ = p;
      fd_ = fd;
      return true;
    }
  }
  if (fd >= 0) close(fd);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return false;
  madvise(p, bytes, MADV_HUGEPAGE);  // a fault per 2 MiB, not per 4 KiB, as the messages first write it
  p_ = p;
  return true;
}

bool DenseCopy::attach(std::int32_t pid, std::int32_t fd, std::size_t bytes) {
  release();
  if (fd < 0) return false;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", int(pid), int(fd));
  const int mine = open(path, O_RDWR | O_CLOEXEC);
  if (mine < 0) return false;
  struct stat st;
  void* p = fstat(mine, &st) == 0 && std::size_t(st.st_size) == bytes
                ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, mine, 0)
                : MAP_FAILED;
  close(mine);  // the mapping keeps the memory
  if (p == MAP_FAILED) return false;
  p_ = p;
  bytes_ = bytes;
  return true;
}

void DenseCopy::release() {
  if (p_) munmap(p_, bytes_);
  if (fd_ >= 0) close(fd_);
  p_ = nullptr;
  fd_ = -1;
  bytes_ = 0;
}

std::int32_t DenseCopy::pid() const { return std::int32_t(getpid()); }

}  // namespace blasoffload::scalapack
