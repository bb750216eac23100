// detred-audit: how wrong and how unreproducible is each way of summing your data? Reads a file (.npy, raw binary,
// text), generates one (--gen, --sweep), or takes its embedded default; runs every detred sum on the CPU (and the GPU:
// --device), and reports errors against the exact sum, a-priori bounds, speed, and how many different bit patterns
// repeated runs, configurations and orders produced. docs/AUDIT.md is the manual.
//
// Exit status: 0 all promises kept; 1 an algorithm documented as deterministic gave more than one result (or an
// exact one missed the correctly rounded sum): usable in CI; 2 the audit could not run (bad input or usage, with a
// one-line message on stderr).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "audit.hpp"
#include "csv_writer.hpp"
#include "default_input.hpp"
#include "detred/config.hpp"
#include "detred/verify/generators.hpp"
#include "gpu_algorithms.hpp"
#include "json_writer.hpp"
#include "npy_reader.hpp"
#include "npy_writer.hpp"
#include "progress.hpp"
#include "raw_reader.hpp"
#include "registry.hpp"
#include "svg_plot.hpp"
#include "table_writer.hpp"
#include "text_reader.hpp"

namespace audit = detred::audit;
namespace verify = detred::verify;

namespace {

constexpr int exit_broken_promise = 1;
constexpr int exit_cannot_run = 2;

// An error that ends the run with exit status 2 and its one-line message.
struct usage_error {
  std::string message;
};

struct cli_options {
  std::string file;
  std::string format = "auto";
  std::string dtype;  // "" = the format's own (npy), f64 (text, generators); required for raw
  std::string endian = "little";
  std::string gen;
  std::uint64_t n = 0;
  double cond = 1e16;
  std::uint64_t seed = 1;
  bool sweep = false;
  std::string plot;
  std::string device = "cpu";
  std::vector<std::string> algorithms;
  bool list_algorithms = false;
  unsigned repeat = 5;
  unsigned permute = 10;
  bool configs = true;
  std::vector<unsigned> threads{1, 2, 3, 4, 8};
  std::string json;
  std::string csv;
  std::string save;
  bool quiet = false;
};

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::vector<std::byte> read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw usage_error{path + ": is a directory, not a data file"};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error{path + ": cannot open the file"};
  std::vector<char> chars{std::istreambuf_iterator<char>(in), {}};
  if (in.bad()) throw usage_error{path + ": read error"};
  std::vector<std::byte> bytes(chars.size());
  for (std::size_t i = 0; i < chars.size(); ++i) bytes[i] = std::byte(static_cast<unsigned char>(chars[i]));
  return bytes;
}

audit::element_type dtype_or(const cli_options& o, audit::element_type fallback) {
  if (o.dtype.empty()) return fallback;
  return *audit::parse_element_type(o.dtype);
}

audit::dataset take(audit::read_result result) {
  if (auto* error = std::get_if<audit::input_error>(&result)) throw usage_error{error->message};
  return std::get<audit::dataset>(std::move(result));
}

// The file, read in the format its name or its first bytes say (or --format).
audit::dataset load_file(const cli_options& o) {
  const std::vector<std::byte> bytes = read_file(o.file);
  std::string format = o.format;
  if (format == "auto") {
    const std::string_view head(reinterpret_cast<const char*>(bytes.data()), std::min<std::size_t>(bytes.size(), 6));
    if (ends_with(o.file, ".npy") || head == audit::npy_magic)
      format = "npy";
    else if (ends_with(o.file, ".bin") || ends_with(o.file, ".raw") || ends_with(o.file, ".dat"))
      format = "raw";
    else
      format = "text";
  }
  if (format == "npy") {
    audit::dataset data = take(audit::parse_npy(bytes, o.file));
    if (!o.dtype.empty() && audit::to_string(data.type()) != o.dtype)
      throw usage_error{o.file + ": holds " + std::string(audit::to_string(data.type())) + " values, not --dtype " +
                        o.dtype + " (omit --dtype for .npy files)"};
    return data;
  }
  if (format == "raw") {
    if (o.dtype.empty()) throw usage_error{o.file + ": raw binary input needs --dtype f16|bf16|f32|f64"};
    const auto order = o.endian == "big" ? audit::byte_order::big : audit::byte_order::little;
    return take(audit::parse_raw(bytes, dtype_or(o, audit::element_type::f64), order, o.file));
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return take(audit::parse_text(text, dtype_or(o, audit::element_type::f64), o.file));
}

template <detred::floating_input T>
audit::dataset generated_as(const verify::generator_options& g, std::string name) {
  audit::dataset data;
  data.source = std::move(name);
  data.shape = {g.n};
  data.values = verify::generate<T>(g);
  return data;
}

audit::dataset generate(const verify::generator_options& g, audit::element_type type) {
  std::ostringstream name;
  name << "<generated: " << verify::to_string(g.kind) << ", n=" << g.n << ", seed " << g.seed;
  if (g.kind == verify::distribution::ill) name << ", condition " << g.condition;
  name << ", " << audit::to_string(type) << ">";
  switch (type) {
    case audit::element_type::f16:
      return generated_as<detred::half>(g, name.str());
    case audit::element_type::bf16:
      return generated_as<detred::bfloat16>(g, name.str());
    case audit::element_type::f32:
      return generated_as<float>(g, name.str());
    case audit::element_type::f64:
      break;
  }
  return generated_as<double>(g, name.str());
}

// The condition numbers of a sweep: 1, 1e2, ..., 1e30.
std::vector<double> sweep_conditions() {
  std::vector<double> c;
  for (int d = 0; d <= 30; d += 2) c.push_back(std::stod("1e" + std::to_string(d)));
  return c;
}

void save_npy(const audit::dataset& data, const std::string& path) {
  std::string bytes;
  try {
    bytes = audit::npy_bytes(data);
  } catch (const std::exception& e) {
    throw usage_error{"--save " + path + ": " + e.what()};
  }
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  if (!out) throw usage_error{"--save " + path + ": cannot write the file"};
}

// Opens `path` for an output option ("-" is stdout) and calls write(stream).
template <class Write>
void write_output(const std::string& option, const std::string& path, Write write) {
  if (path == "-") {
    write(std::cout);
    std::cout.flush();
    return;
  }
  std::ofstream out(path);
  if (!out) throw usage_error{option + " " + path + ": cannot open the file for writing"};
  write(out);
  if (!out) throw usage_error{option + " " + path + ": write error"};
}

void list_algorithms() {
  for (const auto& name : audit::all_algorithm_names()) std::cout << name << '\n';
}

int run(const cli_options& o, const std::string& command_line) {
  if (o.list_algorithms) {
    list_algorithms();
    return 0;
  }
  // Checks that need no data first, so that a mistake costs nothing.
  const auto known = audit::all_algorithm_names();
  for (const auto& a : o.algorithms) {
    bool found = false;
    for (const auto& name : known) found = found || audit::selects(a, name);
    if (!found) throw usage_error{"--algorithms: unknown algorithm '" + a + "' (--list-algorithms shows them)"};
  }
  if (!o.plot.empty() && !o.sweep) throw usage_error{"--plot draws a sweep: add --sweep"};
  if (o.sweep && !o.file.empty()) throw usage_error{"--sweep generates its inputs: give no file"};
  if (!o.gen.empty() && !o.file.empty()) throw usage_error{"give a file or --gen, not both"};
  std::string gpu_name;
  audit::registry_options registry;
  registry.cpu = o.device != "gpu";
  registry.gpu = o.device != "cpu";
  registry.thread_counts = o.threads;
  registry.selection = o.algorithms;
  if (registry.gpu) {
    if (!audit::has_gpu_backend())
      throw usage_error{"--device " + o.device + ": this detred-audit was built without the CUDA backend (no nvcc)"};
#ifdef DETRED_AUDIT_HAS_CUDA
    if (audit::gpu_device_count() == 0)
      throw usage_error{"--device " + o.device + ": no CUDA device is visible (driver missing or no GPU)"};
    gpu_name = audit::gpu_description();
#endif
  }

  // The inputs.
  std::vector<audit::dataset> inputs;
  std::vector<std::optional<double>> targets;
  if (o.sweep) {
    verify::generator_options g{.kind = verify::distribution::ill, .n = o.n ? o.n : 10000, .seed = o.seed};
    for (double c : sweep_conditions()) {
      g.condition = c;
      inputs.push_back(generate(g, dtype_or(o, audit::element_type::f64)));
      targets.push_back(c);
    }
  } else if (!o.gen.empty()) {
    const auto kind = verify::parse_distribution(o.gen);
    if (!kind) throw usage_error{"--gen: unknown generator '" + o.gen + "'"};
    verify::generator_options g{.kind = *kind, .n = o.n ? o.n : 100000, .seed = o.seed, .condition = o.cond};
    inputs.push_back(generate(g, dtype_or(o, audit::element_type::f64)));
    targets.push_back(*kind == verify::distribution::ill ? std::optional<double>(o.cond) : std::nullopt);
  } else if (!o.file.empty()) {
    inputs.push_back(load_file(o));
    targets.push_back(std::nullopt);
  } else {
    audit::dataset data = take(audit::parse_npy(audit::default_input_bytes(), audit::default_input_name));
    inputs.push_back(std::move(data));
    targets.push_back(std::nullopt);
  }
  if (!o.save.empty()) {
    if (inputs.size() != 1) throw usage_error{"--save writes one input; a sweep has many"};
    save_npy(inputs.front(), o.save);
  }

  // The audit.
  audit::audit_options options{.repeat = o.repeat, .permute = o.permute, .configs = o.configs, .permute_seed = o.seed};
  audit::progress_indicator progress(!o.quiet);
  std::vector<audit::input_report> reports;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string phase =
        inputs.size() > 1 ? "input " + std::to_string(i + 1) + "/" + std::to_string(inputs.size()) : "audit";
    reports.push_back(audit::audit_dataset(inputs[i], registry, options,
                                           [&](std::uint64_t done, std::uint64_t total, const std::string& what) {
                                             progress.update(phase, done, total, what);
                                           }));
    reports.back().target_condition = targets[i];
  }
  progress.clear();

  // The reports.
  const int status = audit::any_failure(reports) ? exit_broken_promise : 0;
  if (o.json != "-" && o.csv != "-") {
    if (o.sweep)
      audit::write_sweep_table(std::cout, reports);
    else
      audit::write_table(std::cout, reports);
  }
  if (!o.json.empty()) {
    const audit::run_description run{.version = DETRED_AUDIT_VERSION,
                                     .command_line = command_line,
                                     .gpu = gpu_name,
                                     .sweep = o.sweep,
                                     .exit_status = status};
    write_output("--json", o.json, [&](std::ostream& out) { audit::write_json(out, reports, run); });
  }
  if (!o.csv.empty()) write_output("--csv", o.csv, [&](std::ostream& out) { audit::write_csv(out, reports); });
  if (!o.plot.empty()) write_output("--plot", o.plot, [&](std::ostream& out) { audit::write_svg_plot(out, reports); });
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  cli_options o;
  CLI::App app{
      "detred-audit: the error and reproducibility of every detred sum on your data.\n"
      "With no input, audits an embedded ill-conditioned data set. Exit status: 0 every promise kept, 1 a "
      "deterministic algorithm gave more than one result (or an exact one missed), 2 the audit could not run.",
      "detred-audit"};
  app.add_option("file", o.file, "Data file: .npy (f2/f4/f8, any shape, C order), raw binary (needs --dtype), or text");
  app.add_option("--format", o.format,
                 "How to read the file (auto: .npy name or magic -> npy, .bin/.raw/.dat -> raw, "
                 "else text)")
      ->check(CLI::IsMember({"auto", "npy", "raw", "text"}));
  app.add_option("--dtype", o.dtype, "Element type for raw, text and generated inputs (default f64)")
      ->check(CLI::IsMember({"f16", "bf16", "f32", "f64"}));
  app.add_option("--endian", o.endian, "Byte order of raw input")->check(CLI::IsMember({"little", "big"}));
  app.add_option("--gen", o.gen, "Generate the input: uniform, normal, lognormal, cancel, ill (verify's generators)");
  app.add_option("--n", o.n, "Values to generate (default 100000; 10000 per point for --sweep)");
  app.add_option("--cond", o.cond, "Condition number for --gen ill (1 .. 1e30)")->check(CLI::Range(1.0, 1e30));
  app.add_option("--seed", o.seed, "Seed of the generator and of the random orders");
  app.add_flag("--sweep", o.sweep, "Audit generated 'ill' inputs of condition number 1, 1e2, ..., 1e30");
  app.add_option("--plot", o.plot, "With --sweep: write relative error vs condition number as an SVG file");
  app.add_option("--device", o.device, "Where to run: cpu, gpu (the CUDA kernels), all")
      ->check(CLI::IsMember({"cpu", "gpu", "all"}));
  app.add_option("--algorithms", o.algorithms, "Comma-separated subset, e.g. cpu/tree,kahan (--list-algorithms)")
      ->delimiter(',');
  app.add_flag("--list-algorithms", o.list_algorithms, "Print the stable algorithm names and exit");
  app.add_option("--repeat", o.repeat, "Runs per algorithm in its default configuration (timing median)")
      ->check(CLI::Range(1u, 1000000u));
  app.add_option("--permute", o.permute, "Random orders of the input to run every algorithm on (0: none)");
  app.add_flag("--configs,!--no-configs", o.configs,
               "Run every configuration: CPU thread counts, GPU launch configurations (default on)");
  app.add_option("--threads", o.threads, "CPU thread counts for --configs (default 1,2,3,4,8)")
      ->delimiter(',')
      ->check(CLI::Range(1u, 4096u));
  app.add_option("--json", o.json, "Write the audit as JSON to FILE, or - for stdout");
  app.add_option("--csv", o.csv, "Write the audit as CSV to FILE, or - for stdout");
  app.add_option("--save", o.save, "Also write the input (e.g. a generated one) as a .npy file");
  app.add_flag("-q,--quiet", o.quiet, "No progress indicator on stderr");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : exit_cannot_run;
  }
  std::string command_line;
  for (int i = 0; i < argc; ++i) command_line += (i ? " " : "") + std::string(argv[i]);
  try {
    return run(o, command_line);
  } catch (const usage_error& e) {
    std::cerr << "detred-audit: " << e.message << '\n';
  } catch (const std::exception& e) {
    std::cerr << "detred-audit: error: " << e.what() << '\n';
  }
  return exit_cannot_run;
}
