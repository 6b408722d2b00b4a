// Readers of the testbenches' results documents; see results.hpp.
#include "sim/results.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/input_error.hpp"

namespace capsgen::sim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;  // object members in file order (the coverage bins)

// A JSON value of a results file, with the key that leads to it ("" for the document, "program.cycles",
// "descriptors[3]"), so that every error names the file and the key.
class Node {
 public:
  Node(const fs::path& file, const Json& j, std::string key) : file_(file), j_(j), key_(std::move(key)) {}

  // The member `k` of this object.
  Node at(const char* k) const {
    const std::string key = key_.empty() ? k : key_ + "." + k;
    if (!j_.is_object()) fail(key_, "expected an object");
    const auto it = j_.find(k);
    if (it == j_.end()) fail(key, "missing");
    return Node(file_, *it, key);
  }
  long long integer(const char* k) const {
    const Node n = at(k);
    if (!n.j_.is_number_integer()) n.fail("expected an integer");
    return n.j_.get<long long>();
  }
  bool boolean(const char* k) const {
    const Node n = at(k);
    if (!n.j_.is_boolean()) n.fail("expected true or false");
    return n.j_.get<bool>();
  }
  bool is_null() const { return j_.is_null(); }
  std::string text(const char* k) const { return at(k).text(); }
  std::string text() const {
    if (!j_.is_string()) fail("expected a string");
    return j_.get<std::string>();
  }
  long long integer() const {
    if (!j_.is_number_integer()) fail("expected an integer");
    return j_.get<long long>();
  }
  // The elements of the array member `k`.
  std::vector<Node> items(const char* k) const {
    const Node a = at(k);
    if (!a.j_.is_array()) a.fail("expected an array");
    std::vector<Node> out;
    for (std::size_t i = 0; i < a.j_.size(); ++i) out.emplace_back(file_, a.j_[i], fmt::format("{}[{}]", a.key_, i));
    return out;
  }
  // The members of the object member `k`, in the document's order.
  std::vector<std::pair<std::string, Node>> members(const char* k) const {
    const Node o = at(k);
    if (!o.j_.is_object()) o.fail("expected an object");
    std::vector<std::pair<std::string, Node>> out;
    for (auto it = o.j_.begin(); it != o.j_.end(); ++it) out.emplace_back(it.key(), Node(file_, it.value(), o.key_ + "." + it.key()));
    return out;
  }

  [[noreturn]] void fail(const std::string& message) const { fail(key_, message); }
  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw InputError(file_.string(), 0, 0, key.empty() ? "(document)" : key, message);
  }

 private:
  const fs::path& file_;
  const Json& j_;
  std::string key_;
};

// The document of `path`, parsed with its object keys in file order, once its "schema" is `schema`.
Json load(const fs::path& path, const char* schema) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), 0, 0, "(file)", "cannot read the testbench's results");
  std::ostringstream text;
  text << in.rdbuf();
  Json j = Json::parse(text.str(), nullptr, false);
  if (j.is_discarded()) throw InputError(path.string(), 0, 0, "(document)", "not valid JSON");
  const Node doc(path, j, "");
  const std::string got = doc.text("schema");
  if (got != schema) doc.fail("schema", fmt::format("expected '{}', got '{}'", schema, got));
  return j;
}

Verdict read_verdict(const Node& doc) {
  Verdict v;
  v.pass = doc.boolean("pass");
  v.checks = doc.integer("checks");
  v.errors = doc.integer("errors");
  for (const Node& p : doc.items("problems")) v.problems.push_back(p.text());
  v.simulated_cycles = doc.integer("simulated_cycles");
  if (const Node t = doc.at("trace_reset_released_ps"); !t.is_null()) v.trace_reset_released_ps = t.integer();
  return v;
}

FunctionalCoverage read_coverage(const Node& doc) {
  FunctionalCoverage c;
  for (const auto& [bin, n] : doc.members("functional_coverage")) c.bins.emplace_back(bin, n.integer());
  for (const Node& b : doc.items("functional_coverage_na")) c.na.push_back(b.text());
  return c;
}

Prediction read_prediction(const Node& doc, bool with_norms) {
  const Node p = doc.at("prediction");
  Prediction r;
  r.rtl = p.integer("rtl");
  r.golden = p.integer("golden");
  if (with_norms)
    for (const Node& n : p.items("norms")) r.norms.push_back(n.integer());
  return r;
}

AccelDescriptor read_descriptor(const Node& n) {
  AccelDescriptor d;
  d.id = n.text("id");
  d.label = n.text("label");
  d.cycles = n.integer("cycles");
  d.accept = n.integer("accept");
  d.vectors = n.integer("vectors");
  d.writes = n.integer("writes");
  d.stall_data = n.integer("stall_data");
  d.stall_tile = n.integer("stall_tile");
  d.stall_out = n.integer("stall_out");
  d.wr_wait = n.integer("wr_wait");
  d.model = n.integer("model");
  d.model_stall_data = n.integer("model_stall_data");
  d.model_stall_tile = n.integer("model_stall_tile");
  d.model_stall_out = n.integer("model_stall_out");
  d.reads_data = n.integer("reads_data");
  d.reads_data_vec = n.integer("reads_data_vec");
  d.reads_weight = n.integer("reads_weight");
  d.reads_bias = n.integer("reads_bias");
  d.start = n.integer("start");
  d.vmode = n.integer("vmode") != 0;
  d.ovec = n.integer("ovec") != 0;
  return d;
}

AccelProgram read_accel_program(const Node& doc) {
  const Node p = doc.at("program");
  AccelProgram r;
  r.cycles = p.integer("cycles");
  r.model_cycles = p.integer("model_cycles");
  r.ops = p.integer("ops");
  r.fetch_wait = p.integer("fetch_wait");
  r.words_per_descriptor = p.integer("words_per_descriptor");
  r.fetch = p.text("fetch");
  return r;
}

void read_chip_totals(const Node& doc, ChipResults& r) {
  const Node p = doc.at("program");
  r.program = {p.integer("cycles"),       p.integer("engine_cycles"), p.integer("engine_model_cycles"),
               p.integer("stream_model_cycles"), p.integer("frames"),        p.integer("words")};
  const Node s = doc.at("sequencer");
  r.sequencer = {s.integer("fetch"),    s.integer("engine"),      s.integer("dma"),      s.integer("pmu"),
                 s.integer("eng_busy"), s.integer("wait_dma"),    s.integer("wait_engine"), s.integer("dma_busy"),
                 s.integer("pmu_wait"), s.integer("drain")};
  const Node e = doc.at("engine_stalls");
  r.engine_stalls = {e.integer("stall_data"), e.integer("stall_tile"), e.integer("stall_out"), e.integer("wr_wait")};
  const Node c = doc.at("checked");
  r.checked_operations = c.integer("operations");
  r.checked_elements = c.integer("elements");
  const Node a = doc.at("access_model");
  r.access_checks = a.integer("checks");
  r.access_parts = a.integer("parts");
}

DramTraffic read_dram(const Node& doc) {
  const Node d = doc.at("dram");
  DramTraffic t;
  t.read_beats = d.integer("read_beats");
  t.write_beats = d.integer("write_beats");
  t.requests = d.integer("requests");
  t.reads = d.integer("reads");
  t.writes = d.integer("writes");
  t.row_hits = d.integer("row_hits");
  t.misses = d.integer("misses");
  t.conflicts = d.integer("conflicts");
  t.bytes = d.integer("bytes");
  t.energy_pj = d.integer("energy_pj");
  t.act_pj = d.integer("act_pj");
  t.pre_pj = d.integer("pre_pj");
  t.rd_pj = d.integer("rd_pj");
  t.wr_pj = d.integer("wr_pj");
  t.ref_pj = d.integer("ref_pj");
  t.standby_pj = d.integer("standby_pj");
  t.pj_per_byte_x100 = d.integer("pj_per_byte_x100");
  t.model_gbps_x1000 = d.integer("model_gbps_x1000");
  t.program_gbps_x1000 = d.integer("program_gbps_x1000");
  t.peak_gbps_x1000 = d.integer("peak_gbps_x1000");
  return t;
}

void read_chip_lists(const Node& doc, ChipResults& r) {
  for (const Node& n : doc.items("instructions"))
    r.instructions.push_back({n.integer("index"), n.text("name"), n.integer("parts"), n.integer("cycles"), n.integer("model"),
                              n.integer("done")});
  for (const Node& n : doc.items("memories"))
    r.memories.push_back({n.text("name"), n.integer("eng_rd"), n.integer("eng_wr"), n.integer("dma_rd"), n.integer("dma_wr"),
                          n.integer("dma_wait")});
  for (const Node& n : doc.items("sectors"))
    r.sectors.push_back({n.text("memory"), n.integer("sector"), n.integer("asleep_cycles"), n.integer("sleeps"), n.integer("wakes")});
  for (const Node& n : doc.items("pmus"))
    r.pmus.push_back({n.text("memory"), n.integer("sectors"), n.integer("asleep_sector_cycles"), n.integer("barrier_stall"),
                      n.integer("model_asleep"), n.integer("model_all")});
}

}  // namespace

AccelResults read_accel_results(const fs::path& path) {
  const Json j = load(path, kAccelResultsSchema);
  const Node doc(path, j, "");
  AccelResults r;
  r.testbench = doc.text("testbench");
  if (r.testbench != "accel" && r.testbench != "engine") doc.fail("testbench", "expected 'accel' or 'engine', got '" + r.testbench + "'");
  r.verdict = read_verdict(doc);
  for (const Node& n : doc.items("descriptors")) r.descriptors.push_back(read_descriptor(n));
  for (const Node& n : doc.items("skipped")) r.skipped.push_back(n.text());
  r.program = read_accel_program(doc);
  r.prediction = read_prediction(doc, true);
  r.coverage = read_coverage(doc);
  return r;
}

ChipResults read_chip_results(const fs::path& path) {
  const Json j = load(path, kChipResultsSchema);
  const Node doc(path, j, "");
  ChipResults r;
  r.verdict = read_verdict(doc);
  read_chip_totals(doc, r);
  r.prediction = read_prediction(doc, false);
  r.dram = read_dram(doc);
  read_chip_lists(doc, r);
  r.coverage = read_coverage(doc);
  return r;
}

namespace {

// The problem line of a run that left no results document, with the error lines of its log
// (sim.log beside the results: a failed assertion, a $stop) so the report says why.
std::string no_results_line(const fs::path& path, int rc) {
  std::string line =
      fmt::format("FAIL the testbench exited with status {} and wrote no results ({})", rc, path.string());
  const fs::path log = path.parent_path() / "sim.log";
  std::ifstream in(log);
  std::string l, errors;
  int shown = 0;
  while (shown < 5 && std::getline(in, l))
    if (l.find("%Error") != std::string::npos || l.find("Assertion failed") != std::string::npos) {
      errors += "\n  " + l;
      ++shown;
    }
  return errors.empty() ? line + "; its log says why (" + log.string() + ")" : line + "; " + log.string() + ":" + errors;
}

}  // namespace

AccelResults accel_results_of_run(const fs::path& path, int rc) {
  if (fs::exists(path)) return read_accel_results(path);
  AccelResults r;
  r.verdict.problems.push_back(no_results_line(path, rc));
  return r;
}

ChipResults chip_results_of_run(const fs::path& path, int rc) {
  if (fs::exists(path)) return read_chip_results(path);
  ChipResults r;
  r.verdict.problems.push_back(no_results_line(path, rc));
  return r;
}

bool run_passed(const Verdict& v, int rc, long long program_cycles) {
  return rc == 0 && v.pass && v.problems.empty() && program_cycles > 0;
}

}  // namespace capsgen::sim
