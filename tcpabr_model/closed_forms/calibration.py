r"""The delta calibration experiment of seed 004, Section IV.

Procedure (paper): hold the ABR source at a constant rate :math:`\mu` between the minimum
and the mean capacity, find the :math:`\mu^*` that maximises TCP throughput for a given
modulating process, take :math:`\mu^*` as the effective capacity, and find the smallest
:math:`\delta` with :math:`\Gamma_{\rm eff}(\delta) = \mu^*` (eq. 23).  The paper reports
"consistently very large (about 60-70)" values.

Implementation choices (flagged in ``docs/closed_forms.md``):

* TCP throughput for a constant-rate source comes from the Markov renewal engine
  (:func:`tcpabr_model.markov.analyze` with ``feedback="constant"``), which gives an
  optimistic and a conservative bound; the calibration is done for both.
* The engine counts whole packets per round trip (``Delta * mu`` packets per slot), so the
  search grid is :math:`\mu = k/\Delta` for integer :math:`k` from :math:`\lceil\Delta r\rceil`
  to :math:`\lfloor\Delta\bar c\rfloor` (r = low rate, :math:`\bar c` = mean rate).
  At :math:`\mu = r` the source never exceeds the link rate, nothing is lost and the
  throughput is :math:`\mu` exactly; the engine has no loss cycle to renew on there, so
  this end point is evaluated analytically (``source="no-loss"`` in the rows).
* Slot = :math:`\Delta` (the modulating chain is embedded at multiples of Delta, switch
  probability :math:`1/\psi`), :math:`C_i = \Delta \times` rate packets per slot, so
  :math:`\delta` comes out **per packet**, consistent with
  :math:`\delta = -\log\epsilon / B_{\max}` with :math:`B_{\max}` in packets.  We also report
  :math:`\delta\Delta` ("per unit of normalised rate x slot"), the value one gets when
  :math:`C_i` is written as the normalised rate (1 or ``rate_ratio``) per slot.
* :math:`\mu^* = r` (the minimum, also :math:`\Gamma(\infty)` here because both states
  have self-loops) gives :math:`\delta = \infty`; :math:`\mu^* = \bar c` gives 0.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from .._validate import check_int, check_real
from .qos_exponent import delta_for_rate_two_state

__all__ = ["CalibrationRow", "calibrate_delta", "calibration_grid"]


@dataclass(frozen=True)
class CalibrationRow:
    """Result of the calibration for one modulating process and buffer.

    Attributes
    ----------
    psi, bmax, delta_rtt, rate_ratio, wmax : scenario (delta_rtt = Delta in time units)
    bound : {"optimistic", "conservative"}
    mu_star : float
        Throughput-maximising constant source rate, packets per time unit.
    throughput : float
        TCP throughput at mu_star, packets per time unit.
    delta_per_packet : float
        Smallest delta with Gamma(delta) = Delta * mu_star for C_i = Delta * rate packets
        per slot of length Delta (inf when mu_star is the minimum rate, 0 at the mean).
    delta_rate_units : float
        ``delta_per_packet * Delta``.
    delta_range : tuple(float, float)
        delta_per_packet at mu_star +- half a grid step (1 / (2 Delta)): the resolution of
        the calibration (the engine counts whole packets per round trip).
    mu_within_1pct : tuple(float, float)
        Smallest and largest source rate whose throughput is within 1 % of the maximum:
        a wide interval means the argmax (and so delta) is ill-conditioned.
    epsilon : float
        Implied loss target exp(-delta_per_packet * bmax).
    n_rates : int
        Number of source rates evaluated.
    """

    psi: float
    bmax: int
    delta_rtt: float
    rate_ratio: float
    wmax: int
    bound: str
    mu_star: float
    throughput: float
    delta_per_packet: float
    delta_rate_units: float
    delta_range: tuple
    mu_within_1pct: tuple
    epsilon: float
    n_rates: int

    def to_dict(self) -> dict:
        d = asdict(self)
        for k in ("delta_per_packet", "delta_rate_units"):
            if math.isinf(d[k]):
                d[k] = "inf"
        d["delta_range"] = ["inf" if math.isinf(v) else v for v in d["delta_range"]]
        return d


def _throughputs(delta_rtt, bmax, psi, rate_ratio, wmax, mus):
    from ..markov import Scenario, analyze  # lazy: the engine is heavy to import

    opt, con = [], []
    for mu in mus:
        if mu <= rate_ratio * (1 + 1e-12):
            # never faster than the link: no loss, every packet delivered
            opt.append(mu)
            con.append(mu)
            continue
        r = analyze(Scenario(delta=delta_rtt, bmax=bmax, psi=psi, rate_ratio=rate_ratio, wmax=wmax,
                             feedback="constant", source_rate=float(mu)))
        opt.append(r.throughput_optimistic)
        con.append(r.throughput_conservative)
    return np.array(opt), np.array(con)


def calibrate_delta(psi, bmax, *, delta_rtt=40.0, rate_ratio=0.5, wmax=128) -> list[CalibrationRow]:
    """Run the Section IV calibration for one modulating process and buffer.

    Parameters
    ----------
    psi : float >= 1
        Mean time per state over Delta (switch probability 1/psi per slot of Delta).
    bmax : int >= 1
        Bottleneck buffer, packets.
    delta_rtt : float, optional(default=40)
        Round-trip propagation delay Delta, packet times at the high rate.
    rate_ratio : float in (0, 1), optional(default=0.5)
        Low rate (the high rate is 1 packet per time unit).
    wmax : int, optional(default=128)

    Returns
    -------
    list of CalibrationRow
        One row for the optimistic and one for the conservative throughput bound.
    """
    psi = check_real("psi", psi, 1.0)
    bmax = check_int("bmax", bmax, 1)
    delta_rtt = check_real("delta_rtt", delta_rtt, 1.0)
    r = check_real("rate_ratio", rate_ratio, 0.0, 1.0, low_open=True, high_open=True)
    wmax = check_int("wmax", wmax, 1)
    p = 1.0 / psi
    mean = 0.5 * (1.0 + r)  # symmetric chain
    k_lo = math.ceil(delta_rtt * r - 1e-9)
    k_hi = math.floor(delta_rtt * mean + 1e-9)
    mus = np.arange(k_lo, k_hi + 1) / delta_rtt
    opt, con = _throughputs(delta_rtt, bmax, psi, r, wmax, mus)
    rows = []
    for bound, thr in (("optimistic", opt), ("conservative", con)):
        i = int(np.argmax(thr))
        mu_star = float(mus[i])
        def delta_of(mu):
            if mu <= r * (1 + 1e-12):
                return math.inf
            if mu >= mean * (1 - 1e-12):
                return 0.0
            return delta_for_rate_two_state(p, p, delta_rtt, delta_rtt * r, delta_rtt * mu) if p < 1 else math.nan

        d = delta_of(mu_star)
        near = mus[thr >= 0.99 * thr[i]]
        half = 0.5 / delta_rtt
        d_range = (delta_of(min(mu_star + half, mean)), delta_of(max(mu_star - half, r)))
        rows.append(CalibrationRow(
            psi=psi, bmax=bmax, delta_rtt=delta_rtt, rate_ratio=r, wmax=wmax, bound=bound,
            mu_star=mu_star, throughput=float(thr[i]), delta_per_packet=d,
            delta_rate_units=d * delta_rtt, delta_range=d_range,
            mu_within_1pct=(float(near.min()), float(near.max())), epsilon=math.exp(-d * bmax) if np.isfinite(d) else 0.0,
            n_rates=len(mus),
        ))
    return rows


def calibration_grid(psis=(1.5, 2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0), bmaxes=(8, 10, 12, 20), **kw):
    """:func:`calibrate_delta` over a grid of modulating processes (psi) and buffers."""
    rows = []
    for psi in psis:
        for b in bmaxes:
            rows.extend(calibrate_delta(psi, b, **kw))
    return rows


def main(argv=None) -> int:  # pragma: no cover - thin script entry
    """``python -m tcpabr_model.closed_forms.calibration [--json]``: print the grid."""
    import argparse
    import json

    ap = argparse.ArgumentParser(description="delta calibration (seed 004 Sec. IV)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--quick", action="store_true", help="small grid")
    a = ap.parse_args(argv)
    rows = calibration_grid((2.0, 5.0, 20.0), (10,)) if a.quick else calibration_grid()
    if a.json:
        print(json.dumps([r.to_dict() for r in rows], indent=2))
    else:
        print(f"{'psi':>6} {'Bmax':>4} {'bound':>12} {'mu*':>7} {'thr':>7} {'delta/pkt':>10} "
              f"{'range/pkt':>19} {'delta*D':>9} {'eps':>9} {'mu within 1%':>14}")
        for r in rows:
            rng = f"[{r.delta_range[0]:.3g}, {r.delta_range[1]:.3g}]"
            print(f"{r.psi:6g} {r.bmax:4d} {r.bound:>12} {r.mu_star:7.4f} {r.throughput:7.4f} "
                  f"{r.delta_per_packet:10.4g} {rng:>19} {r.delta_rate_units:9.4g} {r.epsilon:9.2e} "
                  f"{r.mu_within_1pct[0]:6.3f}-{r.mu_within_1pct[1]:.3f}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
