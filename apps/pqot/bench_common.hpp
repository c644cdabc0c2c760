// What `pqot bench crypto` and `pqot bench sig` share: options, timing rounds with medians, the
// machine description and the table / JSON output (docs/cli.md, "pqot bench").
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace pqot::app::bench {

struct Options {
  std::string alg;
  long iterations = 0;  // 0: calibrate to ~80 ms per round
  int rounds = 5;
  bool json = false;
};

struct Row {
  std::string name;
  double us_per_op = 0;  // median over rounds
  double min_us = 0, max_us = 0;
  long iterations = 0;  // per round
  int rounds = 0;
};

/// The options every `pqot bench` command takes: --alg, --iterations, --rounds, --json (with their
/// range checks); the help texts of --alg and --iterations name what the command measures.
void add_options(CLI::App& cmd, Options& o, const std::string& alg_help,
                 const std::string& iterations_help);

/// Median, min and max microseconds per call of `op` over o.rounds rounds of o.iterations calls
/// (or of a calibrated count when o.iterations is 0).
Row measure(const std::string& name, const Options& o, const std::function<void()>& op);

/// A row from individual timings (microseconds), one per operation: the median and the spread.
Row row_of_timings(const std::string& name, std::vector<double> us);

/// The table (or, with o.json, a JSON document with the machine) on stdout. `per_operation`
/// says the rows come from individual timings of exactly o.iterations operations.
void print_rows(const std::vector<Row>& rows, const Options& o, bool per_operation);

}  // namespace pqot::app::bench
