// What the Wine tests of planted links share: the directory their plants script made (argv[1],
// its '\' turned to '/') and two looks at files in it that go through no Stackie code, so that
// a test can tell what a refused call left untouched.
#pragma once

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>
// windows.h first.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "base/windows_text.h"

namespace stackie::wine {

inline std::string g_plant_dir;  // DIR, with '/' separators

inline bool exists(const std::string& path) {
  return GetFileAttributesW(widen(path).c_str()) != INVALID_FILE_ATTRIBUTES;
}

inline std::string contents(const std::string& path) {
  std::ifstream in(widen(path).c_str(), std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The test program's main: `PROGRAM DIR`, DIR made by `script`.
inline int run_in_plant_dir(int argc, char** argv, const char* script) {
  testing::InitGoogleTest(&argc, argv);
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR (made by %s)\n", argv[0], script);
    return 2;
  }
  g_plant_dir = argv[1];
  for (char& c : g_plant_dir)
    if (c == '\\') c = '/';
  return RUN_ALL_TESTS();
}

}  // namespace stackie::wine
