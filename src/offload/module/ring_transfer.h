// Moves a host operand (a matrix or a triangle, routines/operand.h) to or from its packed device image through a
// small ring of pinned pieces: the staging threads pack (or unpack) one piece while the DMA engine moves the others,
// so a large operand goes at about the slower of the two rates, with pinned memory bounded by the ring, not the
// operand. The LAPACK path's transfers (lapack_exec.h).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "offload/cuda_module_api.h"
#include "routines/operand.h"

namespace bom {

struct Ring {
  char* pinned = nullptr;  // slots * piece_bytes of pinned memory
  size_t piece_bytes = 0;
  int slots = 0;
};

// The ring a call needs: kRingSlots pieces of kRingPieceBytes, or one column of the operand if that is larger.
constexpr int kRingSlots = 4;
constexpr size_t kRingPieceBytes = size_t(16) << 20;
size_t ring_piece_bytes(const bo::routines::Operand& o, int es);

// The device image: a matrix rows x cols with leading dimension rows; a triangle n x n with leading dimension n, only
// its triangle written (by the upload) and read (by the download). Both queue on `st` and return the first CUDA error.
// upload: returns when the last piece is queued (the ring's pinned pieces may still be in flight: the caller
// synchronises `st` before reusing the ring). download: returns when every element is in host memory; it writes the
// program's memory piece by piece, so an error after its first piece leaves the operand partly written (the caller
// cannot hand the call to the CPU then: see lapack_exec.cu).
cudaError_t ring_upload(const Ring& r, void* dev, const void* host, const bo::routines::Operand& o, int es,
                        cudaStream_t st);
cudaError_t ring_download(const Ring& r, void* host, const void* dev, const bo::routines::Operand& o, int es,
                          cudaStream_t st, bool* host_written);

// Regions of host memory to (to_device) or from their places in device memory, each in pieces of at most one ring
// piece's columns (a region's column longer than a piece goes as one piece of its own; the ring's pieces must hold
// it), the ring's slots taken in turn across the regions so that packing one region overlaps the DMA of the previous.
// Returns when every piece has arrived (to_device: on the device; else in host memory), or at the first CUDA error.
cudaError_t ring_copy_regions(const Ring& r, const bo_region* regs, size_t count, int es, bool to_device,
                              cudaStream_t st);

// The pinned memory of a lane's ring in the several-GPU paths (level3_mg, lapack_mg, qr_mg), at least `bytes`, kept
// for the process once given back: pinning costs 0.4-1 ms a MiB, 26-64 ms a lane's 64 MiB ring when each call pinned
// its own. Portable: any GPU's lane may take it. cudaErrorMemoryAllocation when none could be pinned.
cudaError_t lease_ring(size_t bytes, char** p);
// Gives it back once nothing queued uses it any more (nullptr: nothing).
void return_ring(char* p);

}  // namespace bom
