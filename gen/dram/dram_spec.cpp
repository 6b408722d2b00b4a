#include "dram/dram_spec.hpp"

#include <fmt/format.h>

#include "config/yaml_util.hpp"
#include "core/input_error.hpp"

namespace capsgen::dram {

double DramSpec::peak_gbps() const {
  // Two beats per clock.
  return 2.0 * org.word_bytes() * static_cast<double>(org.channels) / timing.tck_ns;
}

const char* to_string(ControllerPolicy p) {
  switch (p) {
    case ControllerPolicy::Fcfs:
      return "fcfs";
    case ControllerPolicy::FcfsOverlap:
      return "fcfs-overlap";
  }
  return "?";
}

DramSpec offchip_dram(const std::string& path) { return path.empty() ? ddr3_1600_2gb_x8() : load_dram_spec(path); }

DramSpec ddr3_1600_2gb_x8() {
  DramSpec s;
  s.name = "micron-mt41j256m8-ddr3-1600";
  s.description = "Micron MT41J256M8 2Gb x8 DDR3-1600 (-125, 11-11-11), 1 channel, 1 rank, 1 chip per rank";
  s.source_path = "(built in)";
  return s;  // the member defaults are these values
}

DramSpec ddr3_1600_2gb_x64_rank() {
  DramSpec s = ddr3_1600_2gb_x8();
  s.name = "micron-mt41j256m8-ddr3-1600-x64";
  s.description = "8 x Micron MT41J256M8 2Gb x8 DDR3-1600 (-125, 11-11-11): a 64-bit rank, 1 channel";
  s.org.chips_per_rank = 8;
  return s;
}

DramSpec load_dram_spec(const std::string& path) { return parse_dram_spec(yaml::read_file(path), path); }

DramSpec parse_dram_spec(const std::string& yaml_text, const std::string& file_name) {
  DramSpec s;
  s.source_path = file_name;
  const YAML::Node doc = yaml::parse(yaml_text, file_name);
  const yaml::MapReader top = yaml::MapReader::root(doc, file_name);
  top.allow_only({"name", "description", "organization", "timing", "power", "controller"});
  s.name = top.get_string("name");
  s.description = top.get_string("description", "");

  const yaml::MapReader o = top.get_map("organization");
  o.allow_only({"channels", "ranks", "chips_per_rank", "device_width", "banks", "bank_groups", "rows", "columns",
                "burst_length"});
  s.org.channels = o.get("channels").as_pow2(1, 64);
  s.org.ranks = o.get("ranks").as_pow2(1, 64);
  s.org.chips_per_rank = o.get("chips_per_rank").as_int(1, 64);
  s.org.device_width = o.get("device_width").as_int_in({4, 8, 16, 32});
  s.org.banks = o.get("banks").as_pow2(1, 64);
  if (o.has("bank_groups")) {
    s.org.bank_groups = o.get("bank_groups").as_pow2(1, 16);
    if (s.org.bank_groups > s.org.banks)
      o.fail("bank_groups", fmt::format("{} bank groups for {} banks: a group needs at least one bank",
                                        s.org.bank_groups, s.org.banks));
  }
  s.org.rows = o.get("rows").as_pow2(1, 1 << 24);
  s.org.columns = o.get("columns").as_pow2(8, 1 << 16);
  s.org.burst_length = o.get("burst_length").as_int_in({4, 8, 16});
  if ((s.org.chips_per_rank * s.org.device_width) % 8 != 0)
    o.fail("chips_per_rank", fmt::format("a beat of {} x {} bits is not a whole number of bytes", s.org.chips_per_rank,
                                         s.org.device_width));
  if (s.org.columns % s.org.burst_length != 0)
    o.fail("columns", fmt::format("{} columns are not a multiple of the burst length {}", s.org.columns,
                                  s.org.burst_length));

  const yaml::MapReader t = top.get_map("timing");
  t.allow_only({"tck_ns", "cl", "cwl", "rcd", "rp", "ras", "rc", "rrd", "faw", "ccd", "rtp", "wtr", "wr", "rfc", "refi",
                "ccd_l", "rrd_l", "wtr_l"});
  DramTiming& tm = s.timing;
  tm.tck_ns = t.get("tck_ns").as_double(0.0, 100.0, true);
  tm.cl = t.get_int("cl", 1, 1000);
  tm.cwl = t.get_int("cwl", 1, 1000);
  tm.rcd = t.get_int("rcd", 1, 1000);
  tm.rp = t.get_int("rp", 1, 1000);
  tm.ras = t.get_int("ras", 1, 10000);
  tm.rc = t.get_int("rc", 1, 10000);
  tm.rrd = t.get_int("rrd", 1, 1000);
  tm.faw = t.get_int("faw", 1, 10000);
  tm.ccd = t.get_int("ccd", 1, 1000);
  tm.rtp = t.get_int("rtp", 1, 1000);
  tm.wtr = t.get_int("wtr", 1, 1000);
  tm.wr = t.get_int("wr", 1, 1000);
  tm.rfc = t.get_int("rfc", 1, 100000);
  tm.refi = t.get_int("refi", 1, 10000000);
  // The same-bank-group values exist only with bank groups; without them they equal the plain ones.
  const bool groups = s.org.bank_groups > 1;
  if (!groups)
    for (const char* k : {"ccd_l", "rrd_l", "wtr_l"})
      if (t.has(k)) t.fail(k, fmt::format("{} applies to devices with bank groups (organization.bank_groups > 1)", k));
  tm.ccd_l = groups ? t.get_int("ccd_l", 1, 1000) : tm.ccd;
  tm.rrd_l = groups ? t.get_int("rrd_l", 1, 1000) : tm.rrd;
  tm.wtr_l = groups ? t.get_int("wtr_l", 1, 1000) : tm.wtr;
  if (tm.ccd_l < tm.ccd) t.fail("ccd_l", fmt::format("ccd_l ({}) is shorter than ccd ({})", tm.ccd_l, tm.ccd));
  if (tm.rrd_l < tm.rrd) t.fail("rrd_l", fmt::format("rrd_l ({}) is shorter than rrd ({})", tm.rrd_l, tm.rrd));
  if (tm.wtr_l < tm.wtr) t.fail("wtr_l", fmt::format("wtr_l ({}) is shorter than wtr ({})", tm.wtr_l, tm.wtr));
  if (tm.rc < tm.ras + tm.rp)
    t.fail("rc", fmt::format("rc ({}) must be at least ras + rp ({} + {})", tm.rc, tm.ras, tm.rp));
  if (tm.ccd < s.burst_cycles())
    t.fail("ccd", fmt::format("ccd ({}) is shorter than a burst ({} cycles)", tm.ccd, s.burst_cycles()));
  if (tm.refi <= tm.rfc) t.fail("refi", fmt::format("refi ({}) must exceed rfc ({})", tm.refi, tm.rfc));

  const yaml::MapReader p = top.get_map("power");
  p.allow_only({"vdd", "idd0", "idd2n", "idd3n", "idd4r", "idd4w", "idd5b"});
  DramPower& pw = s.power;
  pw.vdd = p.get("vdd").as_double(0.0, 5.0, true);
  pw.idd0 = p.get("idd0").as_double(0.0, 10000.0, true);
  pw.idd2n = p.get("idd2n").as_double(0.0, 10000.0, true);
  pw.idd3n = p.get("idd3n").as_double(0.0, 10000.0, true);
  pw.idd4r = p.get("idd4r").as_double(0.0, 10000.0, true);
  pw.idd4w = p.get("idd4w").as_double(0.0, 10000.0, true);
  pw.idd5b = p.get("idd5b").as_double(0.0, 10000.0, true);
  // The per-command energies subtract the standby currents; they must stay positive.
  if (pw.idd3n < pw.idd2n) p.fail("idd3n", "idd3n (active standby) must be >= idd2n (precharge standby)");
  if (pw.idd0 <= pw.idd3n) p.fail("idd0", "idd0 must exceed idd3n");
  if (pw.idd4r <= pw.idd3n) p.fail("idd4r", "idd4r must exceed idd3n");
  if (pw.idd4w <= pw.idd3n) p.fail("idd4w", "idd4w must exceed idd3n");
  if (pw.idd5b <= pw.idd3n) p.fail("idd5b", "idd5b must exceed idd3n");

  if (const auto c = top.find("controller")) {
    const yaml::MapReader cr = c->as_map();
    cr.allow_only({"policy", "queue_depth"});
    s.controller.policy = cr.get("policy").as_enum({"fcfs", "fcfs-overlap"}) == 0 ? ControllerPolicy::Fcfs
                                                                                 : ControllerPolicy::FcfsOverlap;
    if (s.controller.policy == ControllerPolicy::Fcfs) {
      if (cr.has("queue_depth"))
        cr.fail("queue_depth", "queue_depth applies to policy fcfs-overlap (fcfs serves one request at a time)");
      s.controller.queue_depth = 1;
    } else {
      s.controller.queue_depth = cr.get_int("queue_depth", 1, 256, 8);
    }
  }
  return s;
}

}  // namespace capsgen::dram
