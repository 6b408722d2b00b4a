// Dynamic routing of the golden model against a straightforward float implementation that starts
// from the same prediction vectors (the golden model's u_hat codes, as real numbers).
#include <gtest/gtest.h>

#include <cmath>

#include "golden/fixed_model.hpp"
#include "golden/workload.hpp"
#include "golden_util.hpp"
#include "numerics/activation.hpp"

namespace capsgen {
namespace {

struct FloatRouting {
  std::vector<std::vector<double>> c, s, v;  // per iteration: c [I*J], s and v [J*D]
};

FloatRouting float_routing(const std::vector<double>& uhat, int I, int J, int D, int iters) {
  FloatRouting r;
  std::vector<double> b(std::size_t(I * J), 0.0);
  for (int it = 0; it < iters; ++it) {
    std::vector<double> c(std::size_t(I * J)), s(std::size_t(J * D), 0.0), v(std::size_t(J * D));
    for (int i = 0; i < I; ++i) {
      double mx = -1e300, sum = 0;
      for (int j = 0; j < J; ++j) mx = std::max(mx, b[std::size_t(i * J + j)]);
      for (int j = 0; j < J; ++j) sum += std::exp(b[std::size_t(i * J + j)] - mx);
      for (int j = 0; j < J; ++j) c[std::size_t(i * J + j)] = std::exp(b[std::size_t(i * J + j)] - mx) / sum;
    }
    for (int j = 0; j < J; ++j)
      for (int d = 0; d < D; ++d)
        for (int i = 0; i < I; ++i) s[std::size_t(j * D + d)] += c[std::size_t(i * J + j)] * uhat[std::size_t((i * J + j) * D + d)];
    for (int j = 0; j < J; ++j) {
      double sq = 0;
      for (int d = 0; d < D; ++d) sq += s[std::size_t(j * D + d)] * s[std::size_t(j * D + d)];
      const double k = sq > 0 ? std::sqrt(sq) / (1 + sq) : 0;
      for (int d = 0; d < D; ++d) v[std::size_t(j * D + d)] = s[std::size_t(j * D + d)] * k;
    }
    if (it + 1 < iters)
      for (int i = 0; i < I; ++i)
        for (int j = 0; j < J; ++j)
          for (int d = 0; d < D; ++d) b[std::size_t(i * J + j)] += uhat[std::size_t((i * J + j) * D + d)] * v[std::size_t(j * D + d)];
    r.c.push_back(c);
    r.s.push_back(s);
    r.v.push_back(v);
  }
  return r;
}

class RoutingTest : public ::testing::TestWithParam<std::tuple<const char*, const char*, int>> {};

TEST_P(RoutingTest, FixedRoutingTracksFloatRouting) {
  const auto [preset, model, seed] = GetParam();
  const Network net = test::model(model);
  const Workload wl = prepare_workload(test::preset(preset), net, random_weights(net, std::uint64_t(seed)), "random",
                                       {random_input(net, 900 + std::uint64_t(seed)), random_input(net, 901)});
  const FixedTrace tr = run_golden(wl.cfg, wl.net, wl.qm, quantize_input(wl.cfg, wl.qm, wl.net, random_input(wl.net, std::uint64_t(seed))));
  const std::size_t li = wl.net.layers.size() - 1;
  const Layer& L = wl.net.layers[li];
  const LayerQuant& q = wl.qm.layers[li];
  const IntTensor& uh = tr.get(L.name + ".u_hat");
  const int I = int(uh.shape[0]), J = int(uh.shape[1]), D = int(uh.shape[2]);
  std::vector<double> uhat(uh.size());
  for (std::size_t k = 0; k < uh.size(); ++k) uhat[k] = std::ldexp(double(uh[k]), -q.u_frac);
  const FloatRouting fr = float_routing(uhat, I, J, D, L.routing_iterations);
  const fx::ActParams& ap = wl.qm.act;
  double worst_c = 0, worst_v = 0;
  for (int it = 0; it < L.routing_iterations; ++it) {
    const IntTensor& c = tr.get(L.name + ".iter" + std::to_string(it) + ".c");
    const IntTensor& v = tr.get(L.name + ".iter" + std::to_string(it) + ".v");
    for (std::size_t k = 0; k < c.size(); ++k)
      worst_c = std::max(worst_c, std::fabs(std::ldexp(double(c[k]), -ap.coupling_frac()) - fr.c[std::size_t(it)][k]));
    for (std::size_t k = 0; k < v.size(); ++k)
      worst_v = std::max(worst_v, std::fabs(std::ldexp(double(v[k]), -ap.squash_out_frac()) - fr.v[std::size_t(it)][k]));
  }
  RecordProperty("max_abs_error_c", std::to_string(worst_c));
  RecordProperty("max_abs_error_v", std::to_string(worst_v));
  // Measured over these four workloads: c within 0.0174, v within 0.0503 of float routing.
  EXPECT_LE(worst_c, 0.025);
  EXPECT_LE(worst_v, 0.07);
  // The first iteration's coefficients are the softmax of zeros, as CapsAcc initializes them.
  std::vector<std::int64_t> zeros(static_cast<std::size_t>(J), 0), c0(static_cast<std::size_t>(J));
  fx::softmax(ap, wl.qm.exp_lut, zeros.data(), J, c0.data());
  for (std::int32_t x : tr.get(L.name + ".iter0.c").data) EXPECT_EQ(x, c0[0]);
  EXPECT_EQ(c0[0], std::llround(std::ldexp(1.0 / J, ap.coupling_frac())));
}

INSTANTIATE_TEST_SUITE_P(Workloads, RoutingTest,
                         ::testing::Values(std::make_tuple("small-4x4", "capsnet-tiny", 1),
                                           std::make_tuple("small-4x4", "capsnet-tiny", 2),
                                           std::make_tuple("tiny-2x2", "capsnet-tiny", 3),
                                           std::make_tuple("capsacc-16x16", "capsnet-small", 4)));

}  // namespace
}  // namespace capsgen
