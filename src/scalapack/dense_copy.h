// The dense copy of a ScaLAPACK submatrix that process (0,0) factors: memory the grid's other processes of the node
// map too where they can (each then copies its own part in and out, all at once), else private memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace blasoffload::scalapack {

class DenseCopy {
 public:
  DenseCopy() = default;
  DenseCopy(const DenseCopy&) = delete;
  DenseCopy& operator=(const DenseCopy&) = delete;
  ~DenseCopy() { release(); }

  // Process (0,0): `bytes` of fresh zero pages (a Cholesky's triangle that is never copied in reads as zeros), in a
  // memfd the others can map (handle() says which), else private. False when neither could be had.
  bool create(std::size_t bytes);
  // Another process: maps (0,0)'s memfd, named by its handle(). False when it cannot (no /proc, another user).
  bool attach(std::int32_t pid, std::int32_t fd, std::size_t bytes);
  void release();

  void* data() const { return p_; }
  bool shareable() const { return fd_ >= 0; }
  // What attach() takes on another process: this process's pid and the memfd's descriptor (-1: not shareable).
  std::int32_t pid() const;
  std::int32_t fd() const { return fd_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
  int fd_ = -1;
};

}  // namespace blasoffload::scalapack
