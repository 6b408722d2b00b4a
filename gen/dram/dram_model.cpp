#include "dram/dram_model.hpp"

#include <algorithm>
#include <stdexcept>

namespace capsgen::dram {

const char* to_string(RowOutcome o) {
  switch (o) {
    case RowOutcome::Hit:
      return "hit";
    case RowOutcome::Miss:
      return "miss";
    case RowOutcome::Conflict:
      return "conflict";
  }
  return "?";
}

DramStats stats_delta(const DramStats& a, const DramStats& b) {
  DramStats d;
  d.reads = a.reads - b.reads;
  d.writes = a.writes - b.writes;
  d.bytes_read = a.bytes_read - b.bytes_read;
  d.bytes_written = a.bytes_written - b.bytes_written;
  d.hits = a.hits - b.hits;
  d.misses = a.misses - b.misses;
  d.conflicts = a.conflicts - b.conflicts;
  d.commands.act = a.commands.act - b.commands.act;
  d.commands.pre = a.commands.pre - b.commands.pre;
  d.commands.rd = a.commands.rd - b.commands.rd;
  d.commands.wr = a.commands.wr - b.commands.wr;
  d.commands.ref = a.commands.ref - b.commands.ref;
  d.commands.active_cycles = a.commands.active_cycles - b.commands.active_cycles;
  d.commands.precharged_cycles = a.commands.precharged_cycles - b.commands.precharged_cycles;
  d.first_arrival = b.requests() == 0 ? a.first_arrival : b.end_cycle;
  d.end_cycle = a.end_cycle;
  d.latency_cycles = a.latency_cycles - b.latency_cycles;
  for (std::size_t k = 0; k < 3; ++k) d.service_cycles[k] = a.service_cycles[k] - b.service_cycles[k];
  return d;
}

double DramStats::mean_service_cycles(RowOutcome o) const {
  const std::uint64_t n = o == RowOutcome::Hit ? hits : o == RowOutcome::Miss ? misses : conflicts;
  return n ? double(service_cycles[std::size_t(o)]) / double(n) : 0.0;
}

DramModel::DramModel(const DramSpec& spec, DramModelOptions options)
    : spec_(spec), options_(options), energy_per_command_(command_energy(spec)) {
  banks_.resize(std::size_t(spec_.org.channels) * std::size_t(spec_.org.ranks) * std::size_t(spec_.org.banks));
  const std::size_t groups = std::size_t(std::max(1, spec_.org.bank_groups));
  group_col_.assign(groups, -1);
  group_act_.assign(groups, -1);
  group_wr_end_.assign(groups, -1);
  if (overlap()) col_history_.assign(std::size_t(std::max(1, spec_.controller.queue_depth)), 0);
}

std::size_t DramModel::bank_index(const DramAddress& a) const {
  const DramOrganization& o = spec_.org;
  if (a.channel < 0 || a.channel >= o.channels || a.rank < 0 || a.rank >= o.ranks || a.bank < 0 ||
      a.bank >= o.banks || a.row < 0 || a.row >= o.rows || a.column < 0 || a.column >= o.columns)
    throw std::out_of_range("DRAM address outside the device");
  return (std::size_t(a.channel) * std::size_t(o.ranks) + std::size_t(a.rank)) * std::size_t(o.banks) +
         std::size_t(a.bank);
}

std::uint64_t DramModel::issue(std::uint64_t earliest) {
  std::uint64_t t = std::max(earliest, cmd_free_);
  if (!overlap()) {
    cmd_free_ = t + 1;
    return t;
  }
  // Commands of different requests interleave: take the first free cycle at or after `earliest`.
  while (cmd_slots_.count(t)) ++t;
  cmd_slots_.insert(t);
  cmd_last_ = any_cmd_ ? std::max(cmd_last_, t) : t;
  any_cmd_ = true;
  return t;
}

void DramModel::log(std::uint64_t t, IssuedCommand::Kind k, std::size_t bank) {
  if (!options_.log_commands) return;
  IssuedCommand c;
  c.cycle = t;
  c.kind = k;
  c.bank = bank == std::size_t(-1) ? -1 : int(bank);
  log_.push_back(c);
}

std::uint64_t DramModel::commands_end() const {
  if (!overlap()) return cmd_free_;
  return any_cmd_ ? std::max(cmd_free_, cmd_last_ + 1) : cmd_free_;
}

void DramModel::prune_command_slots() {
  // No later command can issue before the next row command, the next column command or cmd_free_.
  std::uint64_t low = any_col_ ? last_col_ + 1 : 0;
  if (any_row_cmd_) low = std::min(low, last_row_cmd_ + 1);
  low = std::max(low, cmd_free_);
  cmd_slots_.erase(cmd_slots_.begin(), cmd_slots_.lower_bound(low));
}

void DramModel::account_background(std::uint64_t until) {
  if (until <= background_until_) return;
  const std::uint64_t span = until - background_until_;
  if (open_banks_ > 0)
    stats_.commands.active_cycles += span;
  else
    stats_.commands.precharged_cycles += span;
  background_until_ = until;
}

std::uint64_t DramModel::precharge(Bank& b, std::uint64_t earliest) {
  const std::uint64_t t = issue(std::max(earliest, b.pre_ready));
  log(t, IssuedCommand::Kind::Pre, std::size_t(&b - banks_.data()));
  account_background(t);
  b.open_row = -1;
  --open_banks_;
  b.act_ready = std::max(b.act_ready, t + std::uint64_t(spec_.timing.rp));
  ++stats_.commands.pre;
  last_row_cmd_ = t;
  any_row_cmd_ = true;
  return t;
}

void DramModel::note_act(std::uint64_t t) {
  act_window_[std::size_t(act_count_ % 4)] = t;
  ++act_count_;
  last_act_ = t;
  ++stats_.commands.act;
}

void DramModel::refresh_until(std::uint64_t t) {
  const DramTiming& tm = spec_.timing;
  while (next_refresh_ <= t) {
    // After every command issued so far (with fcfs-overlap, some lie beyond cmd_free_).
    std::uint64_t earliest = std::max(next_refresh_, commands_end());
    if (open_banks_ > 0) {
      // PRECHARGE ALL: one command once every open bank may close; each bank's precharge costs E_PRE.
      std::uint64_t ready = earliest;
      for (const Bank& b : banks_)
        if (b.open_row >= 0) ready = std::max(ready, b.pre_ready);
      const std::uint64_t tp = issue(ready);
      log(tp, IssuedCommand::Kind::PreAll, std::size_t(-1));
      account_background(tp);
      for (Bank& b : banks_) {
        if (b.open_row < 0) continue;
        b.open_row = -1;
        ++stats_.commands.pre;
      }
      open_banks_ = 0;
      earliest = tp + std::uint64_t(tm.rp);
    }
    for (const Bank& b : banks_) earliest = std::max(earliest, b.act_ready);  // tRC since the last ACT
    const std::uint64_t tr = issue(earliest);
    log(tr, IssuedCommand::Kind::Ref, std::size_t(-1));
    account_background(tr);
    ++stats_.commands.ref;
    // E_REF is charged above IDD3N: the tRFC window counts as active standby.
    stats_.commands.active_cycles += std::uint64_t(tm.rfc);
    background_until_ = tr + std::uint64_t(tm.rfc);
    for (Bank& b : banks_) b.act_ready = std::max(b.act_ready, tr + std::uint64_t(tm.rfc));
    cmd_free_ = std::max(cmd_free_, tr + std::uint64_t(tm.rfc));
    next_refresh_ += std::uint64_t(tm.refi);
  }
}

AccessResult DramModel::access(const DramAddress& a, bool write, std::uint64_t arrival, std::uint32_t bytes) {
  if (finished_) throw std::logic_error("DramModel::access after finish()");
  const DramTiming& tm = spec_.timing;
  Bank& b = banks_[bank_index(a)];
  if (!started_) {
    started_ = true;
    stats_.first_arrival = arrival;
    background_until_ = arrival;
    next_refresh_ = arrival + std::uint64_t(tm.refi);
    cmd_free_ = std::max(cmd_free_, arrival);
  }
  // Earliest cycle of this request's commands. fcfs: after the previous request's column command
  // (cmd_free_). fcfs-overlap: once the request is in the controller's queue, i.e. after the column
  // command of the request queue_depth places earlier.
  std::uint64_t t = std::max(arrival, cmd_free_);
  const std::size_t depth = col_history_.size();
  if (overlap() && served_ >= depth) t = std::max(t, col_history_[std::size_t(served_ % depth)] + 1);
  if (options_.refresh) refresh_until(t);
  if (overlap()) t = std::max(t, cmd_free_);  // a refresh blocks until tRFC after it
  // Row commands (PRE, ACT) stay in arrival order.
  const std::uint64_t t_row = overlap() && any_row_cmd_ ? std::max(t, last_row_cmd_ + 1) : t;
  const int group = group_of(a);

  AccessResult r;
  bool first_set = false;
  if (b.open_row == a.row) {
    r.outcome = RowOutcome::Hit;
    ++stats_.hits;
  } else {
    if (b.open_row < 0) {
      r.outcome = RowOutcome::Miss;
      ++stats_.misses;
    } else {
      r.outcome = RowOutcome::Conflict;
      ++stats_.conflicts;
      r.first_command = precharge(b, t_row);
      first_set = true;
    }
    std::uint64_t e = std::max(t_row, b.act_ready);
    if (act_count_ > 0) e = std::max(e, last_act_ + std::uint64_t(tm.rrd));
    if (group_act_[std::size_t(group)] >= 0)
      e = std::max(e, std::uint64_t(group_act_[std::size_t(group)]) + std::uint64_t(tm.rrd_l));
    if (act_count_ >= 4) e = std::max(e, act_window_[std::size_t(act_count_ % 4)] + std::uint64_t(tm.faw));
    const std::uint64_t ta = issue(e);
    log(ta, IssuedCommand::Kind::Act, bank_index(a));
    account_background(ta);
    ++open_banks_;
    b.open_row = a.row;
    b.act_time = ta;
    b.act_ready = ta + std::uint64_t(tm.rc);
    b.pre_ready = ta + std::uint64_t(tm.ras);
    note_act(ta);
    group_act_[std::size_t(group)] = std::int64_t(ta);
    last_row_cmd_ = ta;
    any_row_cmd_ = true;
    if (!first_set) {
      r.first_command = ta;
      first_set = true;
    }
  }

  const std::uint64_t burst = std::uint64_t(spec_.burst_cycles());
  std::uint64_t e = std::max(t, b.act_time + std::uint64_t(tm.rcd));
  if (any_col_) e = std::max(e, last_col_ + std::uint64_t(tm.ccd));
  if (group_col_[std::size_t(group)] >= 0)
    e = std::max(e, std::uint64_t(group_col_[std::size_t(group)]) + std::uint64_t(tm.ccd_l));
  if (write) {
    if (any_rd_) e = std::max(e, last_rd_cmd_ + std::uint64_t(tm.cl) + burst + 2 - std::uint64_t(tm.cwl));
    if (data_free_ > std::uint64_t(tm.cwl)) e = std::max(e, data_free_ - std::uint64_t(tm.cwl));
  } else {
    if (any_wr_) e = std::max(e, last_wr_end_ + std::uint64_t(tm.wtr));
    if (group_wr_end_[std::size_t(group)] >= 0)
      e = std::max(e, std::uint64_t(group_wr_end_[std::size_t(group)]) + std::uint64_t(tm.wtr_l));
    if (data_free_ > std::uint64_t(tm.cl)) e = std::max(e, data_free_ - std::uint64_t(tm.cl));
  }
  const std::uint64_t tc = issue(e);
  log(tc, write ? IssuedCommand::Kind::Write : IssuedCommand::Kind::Read, bank_index(a));
  if (!first_set) r.first_command = tc;
  r.column_command = tc;
  const std::uint64_t data_start = tc + std::uint64_t(write ? tm.cwl : tm.cl);
  r.done = data_start + burst;
  last_col_ = tc;
  group_col_[std::size_t(group)] = std::int64_t(tc);
  any_col_ = true;
  if (overlap()) {
    col_history_[std::size_t(served_ % depth)] = tc;
    prune_command_slots();
  }
  ++served_;
  data_free_ = r.done;
  const std::uint32_t full = std::uint32_t(beats_per_access() * spec_.org.word_bytes());
  const std::uint32_t useful = bytes == 0 ? full : std::min(bytes, full);
  if (write) {
    last_wr_end_ = r.done;
    group_wr_end_[std::size_t(group)] = std::int64_t(r.done);
    any_wr_ = true;
    b.pre_ready = std::max(b.pre_ready, r.done + std::uint64_t(tm.wr));
    ++stats_.commands.wr;
    ++stats_.writes;
    stats_.bytes_written += useful;
  } else {
    last_rd_cmd_ = tc;
    any_rd_ = true;
    b.pre_ready = std::max(b.pre_ready, tc + std::uint64_t(tm.rtp));
    ++stats_.commands.rd;
    ++stats_.reads;
    stats_.bytes_read += useful;
  }
  stats_.end_cycle = std::max(stats_.end_cycle, r.done);
  stats_.latency_cycles += r.done - arrival;
  stats_.service_cycles[std::size_t(r.outcome)] += r.done - r.first_command;
  return r;
}

AccessResult DramModel::request(std::uint64_t byte_address, bool write, std::uint32_t bytes, std::uint64_t arrival,
                                const AddressMapping& mapping) {
  if (bytes == 0) throw std::invalid_argument("DramModel::request: zero bytes");
  const std::uint64_t wb = std::uint64_t(spec_.org.word_bytes());
  const std::uint64_t unit = std::uint64_t(beats_per_access()) * wb;  // bytes per column access
  const std::uint64_t first = byte_address / unit, last = (byte_address + bytes - 1) / unit;
  AccessResult out;
  for (std::uint64_t u = first; u <= last; ++u) {
    const std::uint64_t lo = std::max(byte_address, u * unit), hi = std::min(byte_address + bytes, (u + 1) * unit);
    const AccessResult r = access(mapping.decode(u * unit), write, arrival, std::uint32_t(hi - lo));
    if (u == first) out.first_command = r.first_command;
    out.column_command = r.column_command;
    out.done = r.done;
    out.outcome = r.outcome;
  }
  return out;
}

std::uint64_t DramModel::now() const { return std::max({commands_end(), data_free_, background_until_}); }

void DramModel::finish() {
  if (finished_ || !started_) {
    finished_ = true;
    return;
  }
  std::uint64_t end = std::max(stats_.end_cycle, commands_end());
  if (options_.refresh) refresh_until(end);
  // Standby (and refreshes that fell due) up to the end of the last command; the throughput span
  // (stats_.end_cycle) stays at the last data beat.
  account_background(std::max({end, commands_end(), background_until_}));
  finished_ = true;
}

double DramModel::throughput_gbps() const {
  const std::uint64_t c = stats_.cycles();
  if (c == 0) return 0.0;
  return double(stats_.bytes()) / (double(c) * spec_.timing.tck_ns);
}

}  // namespace capsgen::dram
