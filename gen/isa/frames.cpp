#include "isa/frames.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>


namespace capsgen::isa {

namespace {

void need(bool ok, const std::string& field, const std::string& what) {
  if (!ok) throw std::invalid_argument("frame " + field + ": " + what);
}

// First-fit placement in table order (the engine descriptor's rule).
std::vector<PackedField> first_fit(const std::vector<std::pair<std::string, int>>& fields) {
  std::vector<PackedField> out;
  std::vector<int> used;
  for (const auto& [name, bits] : fields) {
    if (bits < 1 || bits > 32) throw std::logic_error("frame layout: field " + name + " has " + std::to_string(bits) + " bits");
    std::size_t w = 0;
    while (w < used.size() && used[w] + bits > 32) ++w;
    if (w == used.size()) used.push_back(0);
    out.push_back({name, bits, int(w), used[w]});
    used[w] += bits;
  }
  return out;
}

int words_of(const std::vector<PackedField>& l) {
  int n = 0;
  for (const PackedField& f : l) n = std::max(n, f.word + 1);
  return n;
}

std::uint64_t mask_of(int bits) { return bits >= 32 ? 0xFFFFFFFFull : (std::uint64_t{1} << bits) - 1; }

void put(std::vector<std::uint32_t>& w, std::size_t at, const PackedField& p, std::uint64_t v) {
  need((v & ~mask_of(p.bits)) == 0, p.name, "value " + std::to_string(v) + " does not fit " + std::to_string(p.bits) + " bits");
  w[at + std::size_t(p.word)] |= static_cast<std::uint32_t>(v << p.lsb);
}

std::uint32_t get(const std::vector<std::uint32_t>& w, std::size_t at, const PackedField& p) {
  return static_cast<std::uint32_t>((std::uint64_t{w[at + std::size_t(p.word)]} >> p.lsb) & mask_of(p.bits));
}

const char* kMemName[kFrameMemories] = {"data", "weight", "acc", "shared"};

// DMA fields in table order, as (pointer into DmaFields) accessors.
std::vector<std::uint32_t> dma_values(const DmaFields& d) {
  std::vector<std::uint32_t> v{d.store, d.dram_addr, d.spm_addr};
  for (int i = 0; i < 3; ++i) v.push_back(d.count[i]);
  for (int i = 0; i < 3; ++i) v.push_back(d.dram_stride[i]);
  for (int i = 0; i < 3; ++i) v.push_back(d.spm_stride[i]);
  v.push_back(d.burst);
  v.push_back(d.size);
  v.push_back(d.widen);
  return v;
}

DmaFields dma_from(const std::vector<std::uint32_t>& v) {
  DmaFields d;
  std::size_t k = 0;
  d.store = v[k++] != 0;
  d.dram_addr = v[k++];
  d.spm_addr = v[k++];
  for (int i = 0; i < 3; ++i) d.count[i] = v[k++];
  for (int i = 0; i < 3; ++i) d.dram_stride[i] = v[k++];
  for (int i = 0; i < 3; ++i) d.spm_stride[i] = v[k++];
  d.burst = v[k++];
  d.size = v[k++];
  d.widen = v[k++] != 0;
  return d;
}

}  // namespace

const char* to_string(FrameKind k) {
  switch (k) {
    case FrameKind::kEngine: return "engine";
    case FrameKind::kDma: return "dma";
    case FrameKind::kPmu: return "pmu";
    case FrameKind::kEnd: return "end";
  }
  return "?";
}

bool DmaFields::operator==(const DmaFields& o) const { return dma_values(*this) == dma_values(o); }

const std::vector<PackedField>& frame_header_layout() {
  static const std::vector<PackedField> l = first_fit({{"kind", 2}, {"wait_engine", 1}, {"pending", 1}, {"wait_dma", 16}});
  return l;
}

std::vector<PackedField> dma_frame_layout(const FrameGeometry& g) {
  std::vector<std::pair<std::string, int>> f{{"store", 1}, {"dram_addr", g.dram_addr_bits}, {"spm_addr", g.spm_addr_bits}};
  for (int i = 0; i < 3; ++i) f.push_back({"count" + std::to_string(i), g.count_bits});
  for (int i = 0; i < 3; ++i) f.push_back({"dram_stride" + std::to_string(i), g.dram_addr_bits});
  for (int i = 0; i < 3; ++i) f.push_back({"spm_stride" + std::to_string(i), g.spm_addr_bits});
  f.push_back({"burst", g.len_bits});
  f.push_back({"size", g.size_bits});
  f.push_back({"widen", 1});
  return first_fit(f);
}

std::vector<PackedField> pmu_frame_layout(const FrameGeometry& g) {
  if (!g.power_gating()) return {};
  std::vector<std::pair<std::string, int>> f{{"wait", 1}};
  for (int m = 0; m < kFrameMemories; ++m)
    if (g.sectors[m] > 0) f.push_back({std::string("awake_") + kMemName[m], g.sectors[m]});
  return first_fit(f);
}

int payload_words(FrameKind k, const FrameGeometry& g) {
  switch (k) {
    case FrameKind::kEngine: return engine_descriptor_words();
    case FrameKind::kDma: return words_of(dma_frame_layout(g));
    case FrameKind::kPmu: return words_of(pmu_frame_layout(g));
    case FrameKind::kEnd: return 0;
  }
  return 0;
}

std::vector<std::uint32_t> pack_frame(const Frame& f, const FrameGeometry& g) {
  std::vector<std::uint32_t> w(1 + std::size_t(payload_words(f.header.kind, g)), 0);
  const auto& h = frame_header_layout();
  need(f.header.kind != FrameKind::kPmu || g.power_gating(), "kind", "a PMU frame without power gating");
  put(w, 0, h[0], std::uint64_t(f.header.kind));
  put(w, 0, h[1], f.header.wait_engine);
  put(w, 0, h[2], f.header.pending);
  put(w, 0, h[3], f.header.wait_dma);
  if (f.header.kind == FrameKind::kEngine && !f.header.pending) {
    need(f.engine.kind != kEngineKindEnd, "engine.kind", "an engine frame cannot carry the end descriptor");
    const auto e = pack_engine_descriptor(f.engine);
    std::copy(e.begin(), e.end(), w.begin() + 1);
  } else if (f.header.kind == FrameKind::kDma) {
    const auto l = dma_frame_layout(g);
    const auto v = dma_values(f.dma);
    for (std::size_t i = 0; i < l.size(); ++i) put(w, 1, l[i], v[i]);
  } else if (f.header.kind == FrameKind::kPmu) {
    const auto l = pmu_frame_layout(g);
    put(w, 1, l[0], f.pmu.wait);
    std::size_t k = 1;
    for (int m = 0; m < kFrameMemories; ++m)
      if (g.sectors[m] > 0) put(w, 1, l[k++], f.pmu.awake[m]);
      else need(f.pmu.awake[m] == 0, std::string("awake_") + kMemName[m], "the memory has no sectors");
  }
  return w;
}

Frame unpack_frame(const std::vector<std::uint32_t>& words, std::size_t& at, const FrameGeometry& g) {
  need(at < words.size(), "header", "no word left at " + std::to_string(at));
  Frame f;
  const auto& h = frame_header_layout();
  f.header.kind = FrameKind(get(words, at, h[0]));
  f.header.wait_engine = get(words, at, h[1]) != 0;
  f.header.pending = get(words, at, h[2]) != 0;
  f.header.wait_dma = get(words, at, h[3]);
  need(f.header.kind != FrameKind::kPmu || g.power_gating(), "kind", "a PMU frame without power gating");
  const std::size_t n = std::size_t(payload_words(f.header.kind, g));
  need(at + 1 + n <= words.size(), "payload",
       std::string(to_string(f.header.kind)) + " frame at word " + std::to_string(at) + " runs past the program");
  const std::size_t p = at + 1;
  if (f.header.kind == FrameKind::kEngine && !f.header.pending) {
    f.engine = unpack_engine_descriptor(std::vector<std::uint32_t>(words.begin() + long(p), words.begin() + long(p + n)));
  } else if (f.header.kind == FrameKind::kDma) {
    const auto l = dma_frame_layout(g);
    std::vector<std::uint32_t> v;
    for (const PackedField& x : l) v.push_back(get(words, p, x));
    f.dma = dma_from(v);
  } else if (f.header.kind == FrameKind::kPmu) {
    const auto l = pmu_frame_layout(g);
    f.pmu.wait = get(words, p, l[0]) != 0;
    std::size_t k = 1;
    for (int m = 0; m < kFrameMemories; ++m)
      if (g.sectors[m] > 0) f.pmu.awake[m] = get(words, p, l[k++]);
  }
  at = p + n;
  return f;
}

std::vector<std::uint32_t> pack_frames(const std::vector<Frame>& frames, const FrameGeometry& g) {
  std::vector<std::uint32_t> out;
  for (const Frame& f : frames) {
    const auto w = pack_frame(f, g);
    out.insert(out.end(), w.begin(), w.end());
  }
  if (frames.empty() || frames.back().header.kind != FrameKind::kEnd) {
    const auto w = pack_frame(Frame{}, g);
    out.insert(out.end(), w.begin(), w.end());
  }
  return out;
}

std::vector<Frame> unpack_frames(const std::vector<std::uint32_t>& words, const FrameGeometry& g) {
  std::vector<Frame> out;
  std::size_t at = 0;
  for (;;) {
    out.push_back(unpack_frame(words, at, g));
    if (out.back().header.kind == FrameKind::kEnd) break;
  }
  need(at == words.size(), "end", std::to_string(words.size() - at) + " words after the end frame");
  return out;
}

std::string frame_text(const Frame& f, const FrameGeometry& g) {
  std::ostringstream s;
  s << to_string(f.header.kind);
  switch (f.header.kind) {
    case FrameKind::kEngine: {
      s << " wait_dma " << f.header.wait_dma;
      if (f.header.pending) {
        s << " pending (not encodable yet)";
        break;
      }
      std::istringstream in(engine_descriptor_text(f.engine));
      std::string k, v;
      while (in >> k >> v)
        if (v != "0" || k == "kind") s << " " << k << " " << v;
      break;
    }
    case FrameKind::kDma: {
      const auto l = dma_frame_layout(g);
      const auto v = dma_values(f.dma);
      s << " wait_engine " << f.header.wait_engine;
      for (std::size_t i = 0; i < l.size(); ++i) {
        s << " " << l[i].name << " ";
        // strides as signed numbers
        const bool signed_field = l[i].name.find("stride") != std::string::npos;
        if (signed_field && l[i].bits <= 32) {
          const std::int64_t x = std::int64_t(v[i]) - ((v[i] >> (l[i].bits - 1)) & 1 ? (std::int64_t{1} << l[i].bits) : 0);
          s << x;
        } else {
          s << v[i];
        }
      }
      break;
    }
    case FrameKind::kPmu:
      s << (f.pmu.wait ? " barrier" : " prefetch");
      for (int m = 0; m < kFrameMemories; ++m)
        if (g.sectors[m] > 0) {
          s << " " << kMemName[m] << " ";
          for (int b = g.sectors[m] - 1; b >= 0; --b) s << ((f.pmu.awake[m] >> b) & 1);
        }
      break;
    case FrameKind::kEnd: break;
  }
  return s.str();
}

}  // namespace capsgen::isa
