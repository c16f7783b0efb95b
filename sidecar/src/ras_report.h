// NCCL's own health report (RAS, NCCL >= 2.24) as a small struct. Every process that uses NCCL
// answers on localhost:28028 (NCCL_RAS_ADDR) for the whole job: the communicators its
// processes hold, each rank's state and launched collectives, and the ranks RAS could not reach.
// From NCCL 2.28.7 the answer can be JSON ("SET FORMAT json"), which is read whole; an older
// NCCL answers text, of which only the problem blocks are kept, in NCCL's words. Pure: bytes in,
// struct or error out (sidecar/README.md, "NCCL's health report").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sidecar {

enum class RasFormat { kJson, kText };

struct RasRank {
  int rank = -1;
  std::string host;  // the node's IP, as NCCL prints it ("unknown" when RAS lacks it)
  int64_t pid = -1;
  int cuda_dev = -1;
  int init_state = 0;   // ncclResult_t: 0 initialised, 7 (ncclInProgress) still initialising
  int async_error = 0;  // ncclResult_t ncclGetAsyncError would return
  bool finalize_called = false;
  bool destroy_flag = false;
  bool abort_flag = false;
  // Collectives this rank has launched on the communicator, by NCCL's name of each
  // ("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"). NCCL does not count
  // send/recv, collectives captured in CUDA graphs, or anything on a one-rank communicator.
  std::map<std::string, uint64_t> collective_counts;
};

// A rank of the communicator from which RAS got no data.
struct RasMissingRank {
  int rank = -1;
  std::string host;
  int64_t pid = -1;
  int cuda_dev = -1;
  bool unresponsive = false;     // its process did not answer RAS this time
  bool considered_dead = false;  // RAS gave up on its process (60 s unreachable)
};

struct RasCommunicator {
  std::string hash;            // "0xae94423cfbb2ef4a", as in NCCL's logs
  std::string secondary_hash;  // with hash, unique per communicator
  int size = 0;
  std::vector<RasRank> ranks;
  std::vector<RasMissingRank> missing_ranks;
  std::string Id() const { return hash + "/" + secondary_hash; }
};

// A text answer's problem block, as NCCL wrote it: `heading` is its first line ("DEAD",
// "INCOMPLETE", "#0-0 (27a079b828ff1a75) MISMATCH", ...), `lines` the indented ones below,
// trimmed.
struct RasTextBlock {
  std::string section;  // "Errors" or "Warnings"
  std::string heading;
  std::vector<std::string> lines;
};

struct RasReport {
  RasFormat format = RasFormat::kJson;
  std::string nccl_version;  // "2.28.9"
  // JSON answers:
  std::vector<RasCommunicator> communicators;
  int timeouts_count = 0;  // RAS timeouts while gathering this answer
  bool repaired = false;   // NCCL 2.28.7-2.28.9 miss a comma in "missing_ranks"; it was put back
  // Text answers:
  std::vector<RasTextBlock> blocks;
};

struct RasParse {
  std::optional<RasReport> report;
  std::string error;  // when !report: why the answer was refused
};

RasParse ParseRasAnswer(RasFormat format, std::string_view answer);

// NCCL 2.28.7 to 2.28.9 print a missing rank's "nvml_dev" without the comma before its
// "status", so any answer with a missing rank (the interesting ones) is not JSON. Puts a comma
// wherever a number ends a line and a key follows, outside strings; valid JSON never has that.
std::string RepairRasJson(std::string_view json, bool* repaired);

// NCCL's words for an ncclResult_t (RAS's text answer prints these).
std::string NcclResultWords(int result);

}  // namespace sidecar
