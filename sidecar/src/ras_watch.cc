#include "ras_watch.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <string_view>
#include <utility>

namespace sidecar {
namespace {

constexpr std::size_t kRanksNamed = 8;  // a longer list of laggards is cut, as NCCL cuts its own

std::string Comm(const RasCommunicator& comm) {
  return "communicator " + comm.hash + " (" + std::to_string(comm.size) + " ranks)";
}

// NCCL's "GPU 5 managed by process 3487984 on node 172.16.64.213".
std::string Gpu(int cuda_dev, int64_t pid, const std::string& host) {
  return "GPU " + std::to_string(cuda_dev) + " managed by process " + std::to_string(pid) + " on node " + host;
}

uint64_t Fnv1a(uint64_t hash, std::string_view bytes) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string Hex(uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) out[static_cast<std::size_t>(i)] = kDigits[value & 0xf];
  return out;
}

bool IsError(int result) { return result != 0 && result != 7; }  // neither ncclSuccess nor ncclInProgress

// "26 ranks have launched up to operation 6650" / "6 ranks have not launched any operations",
// as RAS's text answer words a MISMATCH of operation counts.
std::string CountGroup(uint64_t count, const std::vector<int>& ranks, bool name_them) {
  std::string n = std::to_string(ranks.size()) + (ranks.size() == 1 ? " rank has" : " ranks have");
  std::string text = count == 0 ? n + " not launched any operations"
                                : n + " launched up to operation " + std::to_string(count);
  if (!name_them) return text;
  text += ranks.size() == 1 ? " (rank " : " (ranks ";
  for (std::size_t i = 0; i < ranks.size() && i < kRanksNamed; ++i) {
    text += (i > 0 ? ", " : "") + std::to_string(ranks[i]);
  }
  return text + (ranks.size() > kRanksNamed ? ", ...)" : ")");
}

// A communicator whose ranks disagree on how many of a collective they launched: the words of
// every disagreement, and a key that changes when any count of any rank does.
std::optional<RasCondition> StuckCollective(const RasCommunicator& comm) {
  if (comm.ranks.size() < 2) return std::nullopt;
  std::set<std::string> ops;
  for (const RasRank& rank : comm.ranks) {
    if (rank.abort_flag) return std::nullopt;  // being aborted: its owner already knows
    for (const auto& [op, count] : rank.collective_counts) ops.insert(op);
  }
  std::vector<std::string> differences;
  for (const std::string& op : ops) {
    std::map<uint64_t, std::vector<int>> by_count;
    for (const RasRank& rank : comm.ranks) {
      auto it = rank.collective_counts.find(op);
      by_count[it == rank.collective_counts.end() ? 0 : it->second].push_back(rank.rank);
    }
    if (by_count.size() < 2) continue;
    std::vector<std::pair<uint64_t, std::vector<int>>> groups(by_count.begin(), by_count.end());
    std::stable_sort(groups.begin(), groups.end(),
                     [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
    std::string text = "Communicator ranks have different " + op + " operation counts: ";
    for (std::size_t i = 0; i < groups.size(); ++i) {
      text += (i > 0 ? ", " : "") + CountGroup(groups[i].first, groups[i].second, /*name_them=*/i > 0);
    }
    differences.push_back(std::move(text));
  }
  if (differences.empty()) return std::nullopt;
  std::vector<const RasRank*> ranks;
  for (const RasRank& rank : comm.ranks) ranks.push_back(&rank);
  std::sort(ranks.begin(), ranks.end(), [](const RasRank* a, const RasRank* b) { return a->rank < b->rank; });
  uint64_t hash = 14695981039346656037ull;
  for (const RasRank* rank : ranks) {
    hash = Fnv1a(hash, std::to_string(rank->rank) + ":");
    for (const auto& [op, count] : rank->collective_counts) hash = Fnv1a(hash, op + "=" + std::to_string(count) + ";");
  }
  std::string text = "NCCL RAS: " + Comm(comm) + ": ";
  for (std::size_t i = 0; i < differences.size(); ++i) text += (i > 0 ? "; " : "") + differences[i];
  return RasCondition{"stuck/" + comm.Id() + "/" + Hex(hash), text + "; no count moved"};
}

void JsonConditions(const RasReport& report, std::vector<RasCondition>* dead, std::vector<RasCondition>* gone,
                    std::vector<RasCondition>* errors, std::vector<RasCondition>* stuck) {
  for (const RasCommunicator& comm : report.communicators) {
    for (const RasMissingRank& rank : comm.missing_ranks) {
      std::string who = "rank " + std::to_string(rank.rank) + " of " + Comm(comm) + " (" +
                        Gpu(rank.cuda_dev, rank.pid, rank.host) + ")";
      std::string key = comm.Id() + "/" + std::to_string(rank.rank);
      if (rank.considered_dead) {
        dead->push_back({"dead/" + key, "NCCL RAS: " + who + " is considered dead (unreachable via the RAS network)"});
      } else if (rank.unresponsive) {
        gone->push_back({"unresponsive/" + key, "NCCL RAS: missing communicator data from " + who + ": unresponsive"});
      }
      // Missing but reachable: its process no longer holds the communicator (a finalize or
      // destroy in progress), which RAS calls NOCOMM and no stall.
    }
    for (const RasRank& rank : comm.ranks) {
      bool init = IsError(rank.init_state);
      if (!init && !IsError(rank.async_error)) continue;
      int result = init ? rank.init_state : rank.async_error;
      errors->push_back({"error/" + comm.Id() + "/" + std::to_string(rank.rank) + "/" + std::to_string(result),
                         "NCCL RAS: rank " + std::to_string(rank.rank) + " of " + Comm(comm) + " (" +
                             Gpu(rank.cuda_dev, rank.pid, rank.host) + ") reported " + NcclResultWords(result) +
                             (init ? " (initialization error)" : " (asynchronous error)")});
    }
    if (std::optional<RasCondition> condition = StuckCollective(comm)) stuck->push_back(std::move(*condition));
  }
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// "#0-0 (27a079b828ff1a75) MISMATCH" -> "(27a079b828ff1a75) MISMATCH": the group numbers are
// positions in this one answer's table and move between answers.
std::string WithoutGroup(const std::string& heading) {
  if (heading.empty() || heading[0] != '#') return heading;
  std::size_t space = heading.find(' ');
  return space == std::string::npos ? heading : heading.substr(space + 1);
}

// Text answers (NCCL before 2.28.7): the blocks RAS prints, in its words; a block that reads the
// same in two answers is the same problem (for a MISMATCH of counts: no count moved).
void TextConditions(const RasReport& report, std::vector<RasCondition>* dead, std::vector<RasCondition>* gone,
                    std::vector<RasCondition>* errors, std::vector<RasCondition>* stuck) {
  for (const RasTextBlock& block : report.blocks) {
    std::string body;
    for (const std::string& line : block.lines) body += (body.empty() ? "" : "; ") + line;
    std::string heading = WithoutGroup(block.heading);
    RasCondition condition{heading + "/" + body, "NCCL RAS: " + heading + ": " + body};
    if (block.section == "Errors") {
      if (heading == "DEAD") dead->push_back(std::move(condition));
      else if (EndsWith(heading, "INCOMPLETE")) gone->push_back(std::move(condition));
      else if (EndsWith(heading, "ERROR")) errors->push_back(std::move(condition));
    } else if (EndsWith(heading, "MISMATCH") && body.find("operation counts") != std::string::npos) {
      stuck->push_back(std::move(condition));
    }
  }
}

}  // namespace

std::vector<RasCondition> RasConditions(const RasReport& report) {
  std::vector<RasCondition> dead, gone, errors, stuck;
  if (report.format == RasFormat::kJson) {
    JsonConditions(report, &dead, &gone, &errors, &stuck);
  } else {
    TextConditions(report, &dead, &gone, &errors, &stuck);
  }
  std::vector<RasCondition> all = std::move(dead);
  for (auto* more : {&gone, &errors, &stuck}) {
    all.insert(all.end(), std::make_move_iterator(more->begin()), std::make_move_iterator(more->end()));
  }
  return all;
}

void RasWatch::Observe(Clock::time_point now, const RasReport& report) {
  std::map<std::string, Seen> seen;
  std::vector<RasCondition> conditions = RasConditions(report);
  for (std::size_t i = 0; i < conditions.size(); ++i) {
    auto before = seen_.find(conditions[i].key);
    Clock::time_point since = before == seen_.end() ? now : before->second.since;
    seen.insert_or_assign(conditions[i].key, Seen{std::move(conditions[i].text), since, i});
  }
  seen_ = std::move(seen);
  last_report_ = now;
}

void RasWatch::Forget() {
  seen_.clear();
  last_report_.reset();
}

std::optional<std::string> RasWatch::Reason() const {
  if (!last_report_) return std::nullopt;
  const Seen* oldest = nullptr;
  std::size_t more = 0;
  for (const auto& [key, seen] : seen_) {
    if (*last_report_ - seen.since < timeout_) continue;
    if (oldest == nullptr) {
      oldest = &seen;
      continue;
    }
    ++more;
    if (seen.since < oldest->since || (seen.since == oldest->since && seen.order < oldest->order)) oldest = &seen;
  }
  if (oldest == nullptr) return std::nullopt;
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(*last_report_ - oldest->since).count();
  std::string reason = oldest->text + " (reported for " + std::to_string(seconds) + " s)";
  if (more > 0) reason += "; " + std::to_string(more) + " more problem" + (more > 1 ? "s" : "") + " reported by NCCL RAS";
  return reason;
}

}  // namespace sidecar
