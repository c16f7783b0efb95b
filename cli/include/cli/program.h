// A program's command line as one table of flags (cli/flag.h), from which the parser, the
// --help text and the Markdown table in the docs all follow:
//
//   cli::Program CommandLine(Flags* f) {
//     return {.name = "nccl-operator", .summary = "...", .flags = {
//               cli::Text("namespace", &f->namespace_, "NS", "watch one namespace").DefaultIs("all namespaces"),
//               cli::IntInRange("concurrency", &f->concurrency, 1, 64, "jobs reconciled in parallel")},
//             .epilogue = "SIGTERM or SIGINT: ..."};
//   }
//
// Both spellings, --name=value and --name value; a switch alone, or =true / =false; -h or
// --help stops parsing and asks for the help, --version for the version. Every error names the
// flag, says what it takes and what it got, and ends pointing to --help.
#pragma once

#include <string>
#include <vector>

#include "cli/flag.h"

namespace cli {

struct Program {
  std::string name;      // as typed: "nccl-operator"
  std::string summary;   // the first paragraph of --help
  std::vector<Flag> flags;
  std::string epilogue;  // what follows the flags in --help (signals, environment, exit status)
};

struct ParseOutcome {
  bool help = false;     // -h or --help came before any error; what followed it was not read
  bool version = false;  // --version came before any error (and before -h); the rest was not read
  std::string error;  // not empty: why the command line was refused
  bool ok() const { return error.empty(); }
};

// Sets the fields the flags of `program` point to, in order; the last of a repeated flag wins.
ParseOutcome Parse(const Program& program, const std::vector<std::string>& args);

// --help: the summary, the usage, every flag with its default, then the epilogue.
std::string HelpText(const Program& program);

// --version: "nccl-sidecar 0.1.0\n", the program's name and the release version (VERSION).
std::string VersionText(const Program& program);

// The flags as a Markdown table (flag, default, meaning), for the docs.
std::string MarkdownTable(const Program& program);

// `text` in lines of at most `width` columns (a longer word stands alone), each but the first
// led by `indent` spaces; existing line breaks are kept.
std::string Wrap(const std::string& text, std::size_t width, std::size_t indent = 0);

}  // namespace cli
