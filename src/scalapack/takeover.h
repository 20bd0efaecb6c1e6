// ScaLAPACK's factorizations taken over whole on one node (takeover.cpp): what the exit summary says of them.
#pragma once

#include <string>

namespace blasoffload::scalapack {

// The exit summary's lines about p?getrf, p?potrf and p?geqrf (how many calls, how many gathered, their times); empty
// when the program called neither.
std::string summary();

}  // namespace blasoffload::scalapack
