// What the program's own large staged uploads of full matrices reached (the LAPACK path's ring): the rate at which the
// policy prices staged copies once it has seen some, where only the start-up's short measurement stood for it (module
// API staged_gbs_seen).
#pragma once

#include <cstdint>

namespace bom {

// Uploads this large or larger are timed: the start-up measures 64 MiB, and a smaller one is mostly the ring's
// filling and draining.
constexpr double kSeenMinBytes = double(int64_t(64) << 20);

// One staged upload of `bytes` took `ms` from its first piece's packing to its last piece's arrival.
void note_staged_upload(double bytes, double ms);

// The median rate of the last few uploads noted, in GB/s (0 with none); *samples: how many were noted so far.
double staged_gbs_seen(int64_t* samples);

}  // namespace bom
