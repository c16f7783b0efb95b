// The replay driver: a main() for a fuzz target built with the default compiler (no libFuzzer).
// Feeds every file named on the command line, or found under a directory named there, to
// LLVMFuzzerTestOneInput once, in name order, so CTest checks each target's checked-in corpus
// (seeds and regression inputs) on every run without a clang build. A target's property
// failure aborts, which fails the test; the driver names the input before running it.
//
//   <target>_replay FILE_OR_DIR...
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> Inputs(int argc, char** argv, bool& ok) {
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg = argv[i];
    std::error_code error;
    if (fs::is_directory(arg, error)) {
      for (const auto& entry : fs::recursive_directory_iterator(arg)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else if (fs::is_regular_file(arg, error)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "replay: %s is neither a file nor a directory\n", argv[i]);
      ok = false;
    }
  }
  std::sort(inputs.begin(), inputs.end());
  return inputs;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...\nRuns each input once through the fuzz target.\n", argv[0]);
    return argc < 2 ? 2 : 0;
  }
  bool ok = true;
  const auto inputs = Inputs(argc, argv, ok);
  if (!ok) return 2;
  if (inputs.empty()) {
    std::fprintf(stderr, "replay: no inputs under the paths given\n");
    return 2;
  }
  for (const auto& path : inputs) {
    std::ifstream file(path, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    if (!file.good() && !file.eof()) {
      std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
      return 2;
    }
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", path.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replay: %zu inputs, all passed\n", inputs.size());
  return 0;
}
