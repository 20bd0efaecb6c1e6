// The ScaLAPACK routines taken over whole on one node (takeover.cpp): what the exit summary says of them.
#pragma once

#include <string>

namespace blasoffload::scalapack {

// The exit summary's lines about the ScaLAPACK routines taken over (how many calls, how many gathered, their times);
// empty when the program called none of them.
std::string summary();

}  // namespace blasoffload::scalapack
