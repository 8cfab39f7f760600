// SPDX-License-Identifier: GPL-3.0-or-later
// Zipf(s) sampler over ranks 1..n in O(1) memory: rejection-inversion (Hörmann and
// Derflinger 1996, as in Apache Commons RNG's RejectionInversionZipfSampler).
// P(k) is proportional to 1 / k^s; s = 0 is uniform. Expected < 1.1 iterations per
// sample for every s and n; deterministic for a given uniform source.
#pragma once
#include <cmath>
#include <cstdint>

namespace dnsarena::sim::traffic {

class ZipfSampler {
public:
  // REQUIRES: n >= 1, s >= 0.
  ZipfSampler(std::uint64_t n, double s)
      : n_(static_cast<double>(n)), s_(s), h_x1_(h_integral(1.5) - 1.0), h_n_(h_integral(n_ + 0.5)),
        sv_(2.0 - h_integral_inverse(h_integral(2.5) - h(2.0))) {}

  // A rank in [1, n]; `unit` returns uniform doubles in [0, 1).
  template <class Unit>
  std::uint64_t sample(Unit&& unit) const {
    for (;;) {
      const double u = h_n_ + unit() * (h_x1_ - h_n_);
      const double x = h_integral_inverse(u);
      double k = std::floor(x + 0.5);
      if (k < 1) k = 1;
      if (k > n_) k = n_;
      if (k - x <= sv_ || u >= h_integral(k + 0.5) - h(k)) return static_cast<std::uint64_t>(k);
    }
  }

private:
  double h(double x) const { return std::exp(-s_ * std::log(x)); }
  double h_integral(double x) const {
    const double lx = std::log(x);
    return helper2((1.0 - s_) * lx) * lx;
  }
  double h_integral_inverse(double x) const {
    double t = x * (1.0 - s_);
    if (t < -1.0) t = -1.0;  // numerical safety
    return std::exp(helper1(t) * x);
  }
  // log1p(x) / x, and 1 at 0.
  static double helper1(double x) { return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1.0 - x * (0.5 - x / 3.0); }
  // expm1(x) / x, and 1 at 0.
  static double helper2(double x) { return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1.0 + x * 0.5 * (1.0 + x / 3.0); }

  double n_, s_, h_x1_, h_n_, sv_;
};

}  // namespace dnsarena::sim::traffic
