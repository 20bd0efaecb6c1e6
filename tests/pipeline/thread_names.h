// How many threads of this process carry each name (/proc/self/task/*/comm): the module names its threads so that
// top and the mix benchmark tell them from the CPU BLAS's, and the tests check that they do.
#pragma once

#include <dirent.h>

#include <fstream>
#include <map>
#include <string>

namespace bom {

inline std::map<std::string, int> thread_names() {
  std::map<std::string, int> names;
  DIR* d = opendir("/proc/self/task");
  if (!d) return names;
  for (dirent* e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    std::ifstream f(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    if (std::getline(f, name)) ++names[name];
  }
  closedir(d);
  return names;
}

}  // namespace bom
