#include "ras_report.h"

#include <cctype>
#include <utility>

#include <nlohmann/json.hpp>

namespace sidecar {
namespace {

using nlohmann::json;

// Readers that never throw: a field of the wrong type reads as absent, so a future NCCL that
// adds or retypes a field costs that field, not the report.
int64_t Int(const json& object, const char* key, int64_t fallback) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return fallback;
  return it->get<int64_t>();
}

bool Bool(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_boolean() && it->get<bool>();
}

std::string Text(const json& object, const char* key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

const json& Member(const json& object, const char* key) {
  static const json kEmpty = json::object();
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

RasRank ReadRank(const json& in) {
  RasRank rank;
  rank.rank = static_cast<int>(Int(in, "rank", -1));
  rank.host = Text(in, "host");
  rank.pid = Int(in, "pid", -1);
  rank.cuda_dev = static_cast<int>(Int(in, "cuda_dev", -1));
  const json& status = Member(in, "status");
  rank.init_state = static_cast<int>(Int(status, "init_state", 0));
  rank.async_error = static_cast<int>(Int(status, "async_error", 0));
  rank.finalize_called = Bool(status, "finalize_called");
  rank.destroy_flag = Bool(status, "destroy_flag");
  rank.abort_flag = Bool(status, "abort_flag");
  for (const auto& [op, count] : Member(in, "collective_counts").items()) {
    if (count.is_number_unsigned() || count.is_number_integer()) {
      rank.collective_counts[op] = count.get<uint64_t>();
    }
  }
  return rank;
}

RasMissingRank ReadMissingRank(const json& in) {
  RasMissingRank rank;
  rank.rank = static_cast<int>(Int(in, "rank", -1));
  rank.host = Text(in, "host");
  rank.pid = Int(in, "pid", -1);
  rank.cuda_dev = static_cast<int>(Int(in, "cuda_dev", -1));
  const json& status = Member(in, "status");
  rank.unresponsive = Bool(status, "unresponsive");
  rank.considered_dead = Bool(status, "considered_dead");
  return rank;
}

RasParse ParseJson(std::string_view answer) {
  RasReport report;
  report.format = RasFormat::kJson;
  std::string text = RepairRasJson(answer, &report.repaired);
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return {std::nullopt, "the RAS answer is not a JSON object"};
  auto comms = doc.find("communicators");
  if (comms == doc.end() || !comms->is_array()) {
    return {std::nullopt, "the RAS answer has no \"communicators\" array"};
  }
  report.nccl_version = Text(doc, "nccl_version");
  report.timeouts_count = static_cast<int>(Int(Member(doc, "ras"), "timeouts_count", 0));
  for (const json& in : *comms) {
    if (!in.is_object()) continue;
    RasCommunicator comm;
    comm.hash = Text(in, "hash");
    comm.secondary_hash = Text(in, "secondary_hash");
    comm.size = static_cast<int>(Int(in, "size", 0));
    if (auto ranks = in.find("ranks"); ranks != in.end() && ranks->is_array()) {
      for (const json& rank : *ranks) {
        if (rank.is_object()) comm.ranks.push_back(ReadRank(rank));
      }
    }
    if (auto missing = in.find("missing_ranks"); missing != in.end() && missing->is_array()) {
      for (const json& rank : *missing) {
        if (rank.is_object()) comm.missing_ranks.push_back(ReadMissingRank(rank));
      }
    }
    report.communicators.push_back(std::move(comm));
  }
  return {std::move(report), ""};
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// The text answer (NCCL's rasClientRunComms): a version line, a job summary, a table of
// communicator groups, then "Errors" and "Warnings" sections, each a title underlined with '='
// followed by blocks separated by blank lines. A block's heading starts in column 0 and its
// details are indented by two spaces.
RasParse ParseText(std::string_view answer) {
  RasReport report;
  report.format = RasFormat::kText;
  std::vector<std::string_view> lines = Lines(answer);
  constexpr std::string_view kVersion = "NCCL version ";
  for (std::string_view line : lines) {
    if (line.substr(0, kVersion.size()) == kVersion) {
      std::string_view rest = line.substr(kVersion.size());
      report.nccl_version = std::string(rest.substr(0, rest.find(' ')));
      break;
    }
  }
  if (report.nccl_version.empty()) return {std::nullopt, "the RAS answer has no \"NCCL version\" line"};
  std::string section;
  RasTextBlock* block = nullptr;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    bool underlined = i + 1 < lines.size() && !lines[i + 1].empty() &&
                      lines[i + 1].find_first_not_of('=') == std::string_view::npos;
    if (underlined) {
      section = (line == "Errors" || line == "Warnings") ? std::string(line) : "";
      block = nullptr;
      ++i;
      continue;
    }
    if (section.empty()) continue;
    if (Trim(line).empty()) {
      block = nullptr;
    } else if (line.front() != ' ') {
      report.blocks.push_back({section, std::string(Trim(line)), {}});
      block = &report.blocks.back();
    } else if (block != nullptr) {
      block->lines.emplace_back(Trim(line));
    }
  }
  return {std::move(report), ""};
}

}  // namespace

std::string RepairRasJson(std::string_view json_text, bool* repaired) {
  std::string out;
  out.reserve(json_text.size() + 16);
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = 0; i < json_text.size(); ++i) {
    char c = json_text[i];
    out.push_back(c);
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) continue;
    std::size_t next = i + 1;
    if (next < json_text.size() && std::isdigit(static_cast<unsigned char>(json_text[next]))) continue;
    std::size_t key = json_text.find_first_not_of(" \t\r\n", next);
    bool newline = json_text.substr(next, key == std::string_view::npos ? 0 : key - next).find('\n') !=
                   std::string_view::npos;
    if (key != std::string_view::npos && json_text[key] == '"' && newline) {
      out.push_back(',');
      if (repaired != nullptr) *repaired = true;
    }
  }
  return out;
}

RasParse ParseRasAnswer(RasFormat format, std::string_view answer) {
  if (Trim(answer).empty()) return {std::nullopt, "the RAS answer is empty"};
  return format == RasFormat::kJson ? ParseJson(answer) : ParseText(answer);
}

std::string NcclResultWords(int result) {
  // The strings of RAS's own text answer (client_support.cc, ncclErrorToString).
  switch (result) {
    case 0: return "Success";
    case 1: return "Unhandled CUDA error";
    case 2: return "System error";
    case 3: return "Internal error";
    case 4: return "Invalid argument";
    case 5: return "Invalid usage";
    case 6: return "Remote process error";
    case 7: return "NCCL operation in progress";
    default: return "Unexpected error";
  }
}

}  // namespace sidecar
