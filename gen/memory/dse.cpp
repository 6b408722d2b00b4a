#include "memory/dse.hpp"

#include "memory/streamed.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <map>
#include <mutex>
#include <fmt/format.h>
#include <thread>

namespace capsgen::memory {


std::vector<OpProfile> profiles_from(const std::vector<OpStats>& stats) {
  std::vector<OpProfile> out;
  for (const auto& s : stats) {
    OpProfile p;
    p.name = s.name;
    p.cycles = s.cycles;
    p.usage = {0, s.usage_data, s.usage_weight, s.usage_acc};
    p.reads = {0, s.data_rd, s.weight_rd, s.acc_rd};
    p.writes = {0, s.data_wr, s.weight_wr, s.acc_wr};
    p.offchip_rd = s.offchip_rd;
    p.offchip_wr = s.offchip_wr;
    out.push_back(p);
  }
  return out;
}

long long pow2_size(long long x) {
  if (x <= 0) return 0;
  long long p = 1024;
  while (p < x) p *= 2;
  return p;
}

long long fit_size(long long x, const std::vector<long long>& extra) {
  long long s = pow2_size(x);
  for (long long e : extra)
    if (x > 0 && e >= x && e < s) s = e;
  return s;
}

std::vector<int> sector_pool(long long bytes, int max_sectors, long long granule) {
  std::vector<int> out;
  for (long long sc = 2; sc <= bytes / 128 && sc <= max_sectors; sc *= 2)
    if (granule <= 0 || bytes % (granule * sc) == 0) out.push_back(int(sc));
  return out;
}

namespace {

long long granule(const DseOptions& opt, int m) { return (long long)opt.banks * opt.word_bytes[std::size_t(m)]; }

// What one memory of a configuration sees per operation.
struct MemLoad {
  std::vector<long long> usage;
  std::vector<double> reads, writes;
};

struct Job {
  int option = 0;
  std::array<long long, kMems> bytes{};
  long long first_id = 0, count = 0;
};

// Placement (docs/dse-memory.md section 3): SMP puts everything in the shared memory; SEP each kind in
// its own; HY fills the separate memory first and puts the overflow in the shared one (DESCNet
// Fig. 29), with the accesses split in the same proportion.
std::array<MemLoad, kMems> place(const std::vector<OpProfile>& ops, int option, const std::array<long long, kMems>& bytes) {
  std::array<MemLoad, kMems> l;
  for (auto& m : l) {
    m.usage.assign(ops.size(), 0);
    m.reads.assign(ops.size(), 0);
    m.writes.assign(ops.size(), 0);
  }
  for (std::size_t i = 0; i < ops.size(); ++i)
    for (int k = kData; k <= kAcc; ++k) {
      const long long u = ops[i].usage[k];
      double sep_frac = 1.0;
      if (option == kSmp || option == kSmpPg) sep_frac = 0.0;
      else if (option == kHy || option == kHyPg) sep_frac = u > 0 ? double(std::min(u, bytes[k])) / double(u) : (bytes[k] > 0 ? 1.0 : 0.0);
      const long long u_sep = (long long)(sep_frac * double(u) + 0.5);
      l[k].usage[i] += u_sep;
      l[kShared].usage[i] += u - u_sep;
      l[k].reads[i] += sep_frac * double(ops[i].reads[k]);
      l[k].writes[i] += sep_frac * double(ops[i].writes[k]);
      l[kShared].reads[i] += (1 - sep_frac) * double(ops[i].reads[k]);
      l[kShared].writes[i] += (1 - sep_frac) * double(ops[i].writes[k]);
    }
  return l;
}

int ports_of(int m) { return m == kShared ? 3 : 1; }

SramSpec spec_of(const DseOptions& opt, int m, long long bytes, int sectors) {
  SramSpec s{bytes, opt.banks, ports_of(m), sectors};
  s.block_bytes = opt.block_bytes[std::size_t(m)];
  return s;
}

struct MemEval {
  SramFigures fig;
  double dynamic = 0, leak = 0, wakeup = 0;  // mJ
  std::vector<int> on;                        // per operation: sectors ON (streamed: awake at some time)
  std::vector<double> op_energy;              // per operation: dynamic + static (mJ)
  std::vector<std::vector<double>> awake;     // streamed: per operation and sector, fraction of its cycles awake
};

MemEval eval_mem(const std::vector<OpProfile>& ops, const TechParams& tech, const DseOptions& opt, const MemLoad& l,
                 int m, long long bytes, int sectors) {
  MemEval e;
  e.fig = evaluate_sram(tech, spec_of(opt, m, bytes, sectors), opt.cacti);
  const long long sector_bytes = (bytes + sectors - 1) / sectors;
  int prev_on = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    // A sector index spans all banks; an operation needs ceil(usage / sector) of them ON.
    const int on = sectors == 1 ? 1 : int(std::min<long long>(sectors, (l.usage[i] + sector_bytes - 1) / sector_bytes));
    e.on.push_back(on);
    const double seconds = double(ops[i].cycles) / (opt.clock_mhz * 1e6);
    const double frac_on = sectors == 1 ? 1.0 : (on + (sectors - on) * e.fig.sleep_leak_fraction) / sectors;
    const double leak = e.fig.leak_mw * frac_on * seconds;  // mW * s = mJ
    const double dyn = (l.reads[i] * e.fig.read_pj_per_byte + l.writes[i] * e.fig.write_pj_per_byte) * 1e-9;
    e.leak += leak;
    e.dynamic += dyn;
    e.op_energy.push_back(leak + dyn);
    // Sectors are woken ahead of the operation that needs them (latency hidden, DESCNet V-B); the
    // energy is paid per OFF->ON transition, counting the first power-up.
    if (sectors > 1 && on > prev_on) e.wakeup += (on - prev_on) * e.fig.wake_nj_per_sector * 1e-6;
    prev_on = on;
  }
  return e;
}

// Memory m of a streamed configuration (docs/dse-memory.md section 7): dynamic energy per byte the
// ports move (bank accesses x word bytes), leakage per part from the sectors its PMU frame keeps
// awake (a sleeping one leaks the figures' sleep_leak_fraction), wake-up energy per OFF->ON transition of the PMU
// frames. `sf`: the memory's figures with `sectors` (null: not gated, every sector ON).
MemEval eval_streamed(const TechParams& tech, const DseOptions& opt, const StreamedFigures& f, int m, long long bytes,
                      int sectors, const SectorFigures* sf) {
  MemEval e;
  e.fig = evaluate_sram(tech, spec_of(opt, m, bytes, sf ? sectors : 1), opt.cacti);
  const double hz = opt.clock_mhz * 1e6;
  for (std::size_t i = 0; i < f.op_cycles.size(); ++i) {
    const double cyc = double(f.op_cycles[i]);
    double frac_on = 1.0;
    if (sf && cyc > 0) frac_on = (sf->awake_cycles[i] + (cyc * sectors - sf->awake_cycles[i]) * e.fig.sleep_leak_fraction) / (cyc * sectors);
    const double leak = e.fig.leak_mw * frac_on * cyc / hz;
    const double dyn = (f.rd_bytes[std::size_t(m)][i] * e.fig.read_pj_per_byte + f.wr_bytes[std::size_t(m)][i] * e.fig.write_pj_per_byte) * 1e-9;
    e.leak += leak;
    e.dynamic += dyn;
    e.op_energy.push_back(leak + dyn);
    e.on.push_back(sf ? std::popcount(sf->mask[i]) : sectors);
    e.awake.emplace_back(std::size_t(sf ? sectors : 1), 1.0);
    for (std::size_t s = 0; sf && s < e.awake.back().size(); ++s) e.awake.back()[s] = cyc > 0 ? sf->sector_cycles[i][s] / cyc : 0.0;
  }
  if (sf) e.wakeup = double(sf->wakes) * e.fig.wake_nj_per_sector * 1e-6;
  return e;
}

std::vector<long long> size_range(const std::vector<OpProfile>& ops, int k, const std::vector<long long>& extra) {
  long long lo = 0, hi = 0;
  for (const auto& o : ops)
    if (o.usage[k] > 0) {
      lo = lo == 0 ? o.usage[k] : std::min(lo, o.usage[k]);
      hi = std::max(hi, o.usage[k]);
    }
  std::vector<long long> out;
  if (hi == 0) return {0};
  const long long a = fit_size(lo, extra), b = fit_size(hi, extra);
  for (long long s = pow2_size(lo); s <= b; s *= 2)
    if (s >= a) out.push_back(s);
  for (long long e : extra)
    if (e >= a && e <= b && (e & (e - 1))) out.push_back(e);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<Job> make_jobs(const std::vector<OpProfile>& ops, const DseOptions& opt) {
  std::vector<Job> jobs;
  std::array<long long, kMems> sep{};
  long long smp = 0;
  for (const auto& o : ops) {
    for (int k = kData; k <= kAcc; ++k) sep[k] = std::max(sep[k], o.usage[k]);
    smp = std::max(smp, o.usage[kData] + o.usage[kWeight] + o.usage[kAcc]);
  }
  const auto& ex = opt.extra_sizes;
  for (int k = kData; k <= kAcc; ++k) sep[k] = fit_size(sep[k], ex);
  // SEP: Eq. 2 sizes (with sep_range every size of Algorithm 1's range up to them), and with size_steps
  // each memory also up to size_steps powers of two larger.
  std::array<std::vector<long long>, kMems> sep_sizes;
  for (int k = kData; k <= kAcc; ++k) {
    sep_sizes[k] = opt.sep_range ? size_range(ops, k, ex) : std::vector<long long>{sep[k]};
    for (int i = 0; sep[k] > 0 && i < opt.size_steps; ++i) sep_sizes[k].push_back(pow2_size(sep_sizes[k].back() + 1));
  }
  for (int pg = 0; pg < 2; ++pg) {
    for (long long d : sep_sizes[kData])
      for (long long w : sep_sizes[kWeight])
        for (long long a : sep_sizes[kAcc]) jobs.push_back(Job{kSep + pg, {0, d, w, a}});
    jobs.push_back(Job{kSmp + pg, {fit_size(smp, ex), 0, 0, 0}});
  }
  const auto rd = size_range(ops, kData, ex), rw = size_range(ops, kWeight, ex), ra = size_range(ops, kAcc, ex);
  for (long long d : rd)
    for (long long w : rw)
      for (long long a : ra) {
        const std::array<long long, kMems> b{0, d, w, a};
        long long worst = 0;  // Algorithm 1
        for (const auto& o : ops) {
          long long over = 0;
          for (int k = kData; k <= kAcc; ++k) over += std::max(0LL, o.usage[k] - b[k]);
          worst = std::max(worst, over);
        }
        if (worst == 0) continue;  // no shared memory needed: that is SEP
        for (int pg = 0; pg < 2; ++pg) jobs.push_back(Job{kHy + pg, {fit_size(worst, ex), d, w, a}});
      }
  std::stable_sort(jobs.begin(), jobs.end(), [](const Job& x, const Job& y) { return x.option < y.option; });
  long long id = 0;
  for (auto& j : jobs) {
    j.count = 1;
    if (option_pg(j.option))
      for (int m = 0; m < kMems; ++m)
        if (j.bytes[m] > 0) j.count *= std::max<long long>(1, (long long)sector_pool(j.bytes[m], opt.max_sectors, granule(opt, m)).size());
    j.first_id = id;
    id += j.count;
  }
  return jobs;
}

// The off-chip DRAM energy: the flat program's traffic, or the streamed program's for its memories.
double offchip_mj(const DseOptions& opt, const std::vector<OpProfile>& ops, const StreamedFigures* f) {
  double rd = 0, wr = 0;
  if (f) {
    rd = double(f->dram_read_bytes), wr = double(f->dram_write_bytes);
  } else {
    for (const auto& o : ops) rd += double(o.offchip_rd), wr += double(o.offchip_wr);
  }
  return (rd * opt.offchip_rd_pj_per_byte + wr * opt.offchip_wr_pj_per_byte) * 1e-9;
}

// Each memory's sector counts with power gating ({1}: one sector, not gated; {0}: absent).
std::array<std::vector<int>, kMems> pg_pools(const DseOptions& opt, const std::array<long long, kMems>& bytes) {
  std::array<std::vector<int>, kMems> pools;
  for (int m = 0; m < kMems; ++m) {
    if (bytes[m] == 0) continue;
    pools[m] = sector_pool(bytes[m], opt.max_sectors, granule(opt, m));
    if (pools[m].empty()) pools[m] = {1};
  }
  return pools;
}

std::string size_text(const std::array<long long, kMems>& bytes) {
  std::string s;
  for (int m = 0; m < kMems; ++m)
    if (bytes[m]) s += fmt::format("{}{} {} KiB", s.empty() ? "" : ", ", mem_name(m), bytes[m] / 1024);
  return s;
}

// Keeps the non-dominated points of a growing candidate set.
void prune(std::vector<ConfigPoint>& v) { v = pareto_front(std::move(v)); }

bool better(const ConfigPoint& a, const ConfigPoint& b) {
  if (a.ranked_mj() != b.ranked_mj()) return a.ranked_mj() < b.ranked_mj();
  if (a.area_mm2 != b.area_mm2) return a.area_mm2 < b.area_mm2;
  return a.id < b.id;
}

}  // namespace

std::vector<ConfigPoint> pareto_front(std::vector<ConfigPoint> pts) {
  std::sort(pts.begin(), pts.end(), [](const ConfigPoint& a, const ConfigPoint& b) {
    if (a.area_mm2 != b.area_mm2) return a.area_mm2 < b.area_mm2;
    if (a.ranked_mj() != b.ranked_mj()) return a.ranked_mj() < b.ranked_mj();
    return a.id < b.id;
  });
  std::vector<ConfigPoint> out;
  for (const auto& p : pts)
    if (out.empty() || p.ranked_mj() < out.back().ranked_mj()) out.push_back(p);
  return out;
}


long long count_configs(const std::vector<OpProfile>& ops, const DseOptions& opt) {
  const auto jobs = make_jobs(ops, opt);
  return jobs.empty() ? 0 : jobs.back().first_id + jobs.back().count;
}

DseResult run_dse(const std::vector<OpProfile>& ops, const TechParams& tech, const DseOptions& opt) {
  const std::vector<Job> jobs = make_jobs(ops, opt);
  const long long total = jobs.empty() ? 0 : jobs.back().first_id + jobs.back().count;
  const int nthreads = std::max(1, opt.threads);
  struct Local {
    std::vector<ConfigPoint> cand, sample;
    std::array<ConfigPoint, kOptions> best{};
    std::array<bool, kOptions> has{};
    std::array<long long, kOptions> count{};
    long long skipped = 0;
  };
  std::vector<Local> locals(static_cast<std::size_t>(nthreads));
  const std::size_t window = 64;
  std::vector<std::string> csv(window);

  // Streamed evaluation: one compile per size tuple, before the configurations.
  std::map<std::array<long long, kMems>, StreamedFigures> streamed;
  std::vector<std::array<long long, kMems>> tuples;
  std::map<std::array<long long, kMems>, bool> skip;  // by size tuple
  if (opt.streamed) {
    for (const Job& j : jobs)
      if (!streamed.count(j.bytes)) {
        streamed[j.bytes] = {};
        tuples.push_back(j.bytes);
      }
    std::atomic<std::size_t> next{0};
    std::atomic<long long> compiled{0};
    std::mutex mu;
    auto worker = [&] {
      for (std::size_t k; (k = next.fetch_add(1)) < tuples.size();) {
        // The tuple names its organization: shared only (SMP), shared beside the others (HY), or none (SEP).
        const int option = tuples[k][kShared] == 0 ? kSepPg : tuples[k][kData] > 0 ? kHyPg : kSmpPg;
        StreamedFigures f = (*opt.streamed)(option, tuples[k], pg_pools(opt, tuples[k]));
        std::lock_guard<std::mutex> lock(mu);
        streamed[tuples[k]] = std::move(f);
        if (opt.compile_progress) opt.compile_progress(++compiled, (long long)tuples.size());
      }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < nthreads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& th : pool) th.join();
  }

  auto run_job = [&](const Job& j, Local& L, std::string* out) {
    // Each memory's figures per sector count, then every combination is a sum (Algorithm 2).
    std::array<std::vector<int>, kMems> pools = option_pg(j.option) ? pg_pools(opt, j.bytes) : std::array<std::vector<int>, kMems>{};
    std::array<std::vector<MemEval>, kMems> evals;
    const StreamedFigures* f = nullptr;
    if (opt.streamed) {
      const auto it = streamed.find(j.bytes);
      if (it == streamed.end() || !it->second.ok) {
        L.skipped += j.count;
        return;
      }
      f = &it->second;
    }
    const auto loads = f ? std::array<MemLoad, kMems>{} : place(ops, j.option, j.bytes);
    for (int m = 0; m < kMems; ++m) {
      if (j.bytes[m] == 0) {
        pools[m] = {0};
        evals[m] = {MemEval{}};
        continue;
      }
      if (pools[m].empty()) pools[m] = {1};
      for (std::size_t i = 0; i < pools[m].size(); ++i) {
        const int sc = pools[m][i];
        evals[m].push_back(f ? eval_streamed(tech, opt, *f, m, j.bytes[m], sc, sc > 1 ? &f->sectors[m][i] : nullptr)
                             : eval_mem(ops, tech, opt, loads[m], m, j.bytes[m], sc));
      }
    }
    const double offchip = offchip_mj(opt, ops, f);
    std::array<std::size_t, kMems> idx{};
    for (long long n = 0; n < j.count; ++n) {
      ConfigPoint p;
      p.id = j.first_id + n;
      p.option = j.option;
      p.bytes = j.bytes;
      p.offchip_mj = offchip;
      p.ranked_offchip_mj = opt.objective_total ? offchip : 0.0;
      for (int m = 0; m < kMems; ++m) {
        const MemEval& e = evals[m][idx[m]];
        p.sectors[m] = pools[m][idx[m]];
        p.area_mm2 += e.fig.area_mm2;
        p.dynamic_mj += e.dynamic;
        p.static_mj += e.leak;
        p.wakeup_mj += e.wakeup;
      }
      for (int m = kMems - 1; m >= 0; --m) {  // mixed-radix increment, last memory fastest
        if (++idx[m] < pools[m].size()) break;
        idx[m] = 0;
      }
      L.count[p.option]++;
      if (!L.has[p.option] || better(p, L.best[p.option])) L.best[p.option] = p, L.has[p.option] = true;
      L.cand.push_back(p);
      if (opt.sample_every > 0 && p.id % opt.sample_every == 0) L.sample.push_back(p);
      if (L.cand.size() > 65536) prune(L.cand);
      if (out) *out += csv_row(p);
    }
  };

  long long done = 0;
  for (std::size_t w0 = 0; w0 < jobs.size(); w0 += window) {
    const std::size_t w1 = std::min(jobs.size(), w0 + window);
    std::atomic<std::size_t> next{w0};
    auto worker = [&](int t) {
      for (std::size_t k; (k = next.fetch_add(1)) < w1;) {
        std::string* out = opt.csv_sink ? &csv[k - w0] : nullptr;
        if (out) out->clear();
        run_job(jobs[k], locals[std::size_t(t)], out);
        if (out && opt.csv_transform) *out = opt.csv_transform(*out);
      }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < nthreads; ++t) pool.emplace_back(worker, t);
    worker(0);
    for (auto& th : pool) th.join();
    for (std::size_t k = w0; k < w1; ++k) {
      done += jobs[k].count;
      if (opt.csv_sink) opt.csv_sink(csv[k - w0]);
    }
    if (opt.progress) opt.progress(done, total);
  }

  DseResult r;
  for (const auto& t : tuples)
    if (!streamed[t].ok) r.skipped_why.push_back(fmt::format("{}: {}", size_text(t), streamed[t].why));
  std::vector<ConfigPoint> all;
  for (auto& L : locals) {
    r.skipped += L.skipped;
    prune(L.cand);
    all.insert(all.end(), L.cand.begin(), L.cand.end());
    r.sample.insert(r.sample.end(), L.sample.begin(), L.sample.end());
    for (int o = 0; o < kOptions; ++o) {
      r.per_option[std::size_t(o)] += L.count[std::size_t(o)];
      if (L.has[std::size_t(o)] && (!r.has_best[std::size_t(o)] || better(L.best[std::size_t(o)], r.best[std::size_t(o)])))
        r.best[std::size_t(o)] = L.best[std::size_t(o)], r.has_best[std::size_t(o)] = true;
    }
  }
  r.pareto = pareto_front(std::move(all));
  std::sort(r.sample.begin(), r.sample.end(), [](const ConfigPoint& a, const ConfigPoint& b) { return a.id < b.id; });
  r.evaluated = total;
  return r;
}

ConfigDetail evaluate_config(const std::vector<OpProfile>& ops, const TechParams& tech, const DseOptions& opt,
                             const ConfigPoint& cfg) {
  ConfigDetail d;
  d.point = cfg;
  d.point.area_mm2 = d.point.dynamic_mj = d.point.static_mj = d.point.wakeup_mj = 0;
  StreamedFigures f;
  std::array<MemLoad, kMems> loads;
  if (opt.streamed) {
    std::array<std::vector<int>, kMems> pools;
    for (int m = 0; m < kMems; ++m)
      if (cfg.bytes[m] && option_pg(cfg.option)) pools[m] = {std::max(1, cfg.sectors[m])};
    f = (*opt.streamed)(cfg.option, cfg.bytes, pools);
    if (!f.ok) throw std::runtime_error(fmt::format("configuration {}: {}", cfg.id, f.why));
    d.cycles = f.cycles;
    d.dram_read_bytes = f.dram_read_bytes;
    d.dram_write_bytes = f.dram_write_bytes;
    d.awake_fraction.assign(ops.size(), {});
  } else {
    loads = place(ops, cfg.option, cfg.bytes);
    for (const auto& o : ops) d.cycles += o.cycles;
  }
  d.point.offchip_mj = offchip_mj(opt, ops, opt.streamed ? &f : nullptr);
  d.point.ranked_offchip_mj = opt.objective_total ? d.point.offchip_mj : 0.0;
  d.sectors_on.assign(ops.size(), {});
  d.op_energy_mj.assign(ops.size(), 0.0);
  for (int m = 0; m < kMems; ++m) {
    if (cfg.bytes[m] == 0) continue;
    const int sc = std::max(1, cfg.sectors[m]);
    const MemEval e = opt.streamed ? eval_streamed(tech, opt, f, m, cfg.bytes[m], sc,
                                                   option_pg(cfg.option) && sc > 1 ? &f.sectors[m][0] : nullptr)
                                   : eval_mem(ops, tech, opt, loads[m], m, cfg.bytes[m], cfg.sectors[m]);
    d.figures[m] = e.fig;
    d.area[m] = e.fig.area_mm2;
    d.dynamic[m] = e.dynamic;
    d.leak[m] = e.leak;
    d.wakeup[m] = e.wakeup;
    d.point.area_mm2 += e.fig.area_mm2;
    d.point.dynamic_mj += e.dynamic;
    d.point.static_mj += e.leak;
    d.point.wakeup_mj += e.wakeup;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      d.sectors_on[i][m] = e.on[i];
      if (opt.streamed) d.awake_fraction[i][m] = e.awake[i];
      d.op_energy_mj[i] += e.op_energy[i];  // wake-up energy is small and left out
    }
  }
  return d;
}

}  // namespace capsgen::memory
