// libFuzzer target: the text of a stack file, and optionally of a block definition it names,
// through the whole loader (YAML, stack file, block definition, interpolation, resolution)
// against a hermetic catalog. Input: STACK_TEXT [ "\n#BLOCK\n" BLOCK_TEXT ]; the block text is
// the local definition `fuzz.block` (blocks/fuzz.block.yml), first in the block path.
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "stack/loader.h"

namespace {

const std::string& scratch_dir() {
  static const std::string dir = [] {
    std::string pattern = "/tmp/stackie-loader-fuzz-XXXXXX";
    if (!::mkdtemp(pattern.data())) std::abort();
    ::mkdir((pattern + "/blocks").c_str(), 0755);
    return pattern;
  }();
  return dir;
}

void write_file(const std::string& path, std::string_view text) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) std::abort();
  if (!text.empty() && std::fwrite(text.data(), 1, text.size(), file) != text.size()) std::abort();
  std::fclose(file);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string& dir = scratch_dir();
  const std::string_view marker = "\n#BLOCK\n";
  const std::size_t split = input.find(marker);
  const std::string block_file = dir + "/blocks/fuzz.block.yml";
  write_file(dir + "/stackie-stack.yml", input.substr(0, split));
  if (split != std::string_view::npos)
    write_file(block_file, input.substr(split + marker.size()));
  else
    ::unlink(block_file.c_str());

  stackie::LoadOptions options;
  options.cwd = dir;
  options.env = {{"HOME", dir},
                 {"STACKIE_HOME", dir + "/home"},
                 {"PATH", "/usr/bin:/bin"},
                 {"FUZZ_SECRET", "s3cret"}};
  options.block_path = {dir + "/blocks", STACKIE_FUZZ_SOURCE_ROOT "/tests/fixtures/blocks",
                        STACKIE_FUZZ_SOURCE_ROOT "/share/stackie/blocks"};
  options.shipped_block_path = {STACKIE_FUZZ_SOURCE_ROOT "/share/stackie/blocks"};
  options.os = "linux";
  auto stack = stackie::load_stack(options);
  // An error must be a real message, never an empty one.
  if (!stack.ok() && stack.error().message.empty()) std::abort();
  return 0;
}
