#include "dram/offchip_port.hpp"

#include <algorithm>
#include <cmath>

namespace capsgen::dram {

OffchipPort::OffchipPort(const DramSpec& spec, double clock_mhz, int latency_cycles, int max_burst)
    : model_(spec), mapping_(spec.org), capacity_(spec.org.capacity_bytes()),
      ratio_((1000.0 / spec.timing.tck_ns) / clock_mhz), latency_(latency_cycles), max_burst_(max_burst) {}

std::uint64_t OffchipPort::arrival(long long cycle) const {
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(cycle) * ratio_));
}

long long OffchipPort::read(long long cycle, std::uint64_t byte_address, std::uint32_t bytes) {
  const AccessResult r = model_.request(byte_address % capacity_, false, bytes, arrival(cycle), mapping_);
  return std::max(static_cast<long long>(std::ceil(static_cast<double>(r.done) / ratio_)), cycle + latency_);
}

bool OffchipPort::write_ready(long long cycle) const {
  const double backlog = static_cast<double>(model_.now()) / ratio_ - static_cast<double>(cycle);
  return backlog <= static_cast<double>(latency_ + max_burst_);
}

void OffchipPort::write(long long cycle, std::uint64_t byte_address, std::uint32_t bytes) {
  model_.request(byte_address % capacity_, true, bytes, arrival(cycle), mapping_);
}

}  // namespace capsgen::dram
