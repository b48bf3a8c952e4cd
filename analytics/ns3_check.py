"""ns-3 against the cell simulator: TCP alone at constant capacity or on the two-state link
(issue 25, docs/simulator.md "Against ns-3").

An independent packet-level check that needs ns-3's Python bindings (``pip install
ns3==3.44.post0``; kept out of the base install and of CI). Topology: sender -- 1 Gb/s, no
delay -- router -- bottleneck -- receiver. The bottleneck serves one 1000-byte packet
(958-byte segment + 40 bytes of TCP/IP + 2 of PPP) per 5 ms, the simulator's time unit, and
its propagation makes a round trip of ``Delta`` time units; its drop-tail device queue holds
``B`` packets *waiting*, so the simulator's ``bmax`` (which counts the packet in service) is
``B + 1``. TCP: NewReno congestion control, initial window 1, no delayed ACKs, no timestamps,
no limited transmit, W_max 128 segments (the receive buffer), RFC 6298 timer with minimum
``--min-rto`` (default 2 Delta, the paper's timer); ``timeout-only`` disables fast retransmit
(``ReTxThreshold`` 10^6, no SACK), ``sack`` is ns-3's default recovery (SACK + PRR). The
simulator runs ``TcpConfig(rto='estimator', rto_min=--min-rto)``, 4 replications (constant
capacity: identical), the same duration.

``--psi 0.3,1,2,10,50`` runs the two-state link instead (rate ratio 0.5, a change with
probability 1 / psi at every round trip from time 0: the simulator's embedded mode; below
psi 1 exponential sojourns of mean psi round trips, its continuous mode; the
efficiency is over the time-average capacity of each run), 3 replications by default.

``--feedback instcap`` emulates INSTCAP without cells: the sender's access link (its device
queue unlimited: the segmentation buffer) runs at the bottleneck capacity averaged over the
last round trip, set at each round trip's end (the simulator with ``interval`` = one round
trip and ``feedback_delay`` 0, the validity map's Fig. 8/9 setting).

``--trace B,T0,T1`` prints ns-3's event trace (segments sent, ACKs, the bottleneck queue's
length and transmission ends) between T0 and T1 seconds at buffer B, timeout-only: what
docs/simulator.md quotes for the slow start that loses.

    python analytics/ns3_check.py [--quick] [--buffers 6,8,10] [--variants sack] [--psi 1,10]
"""

from __future__ import annotations

import argparse
import sys
import time

from tcpabr_model.closed_forms import reno_efficiency
from tcpabr_model.stats import Estimate

PKT_S = 0.005   # seconds per packet at the bottleneck: the simulator's time unit

_CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/applications-module.h"
#include "ns3/traffic-control-module.h"
using namespace ns3;
namespace tcpabr_ns3 {
const double pkt_s = 0.005;      // seconds per packet at the bottleneck (PKT_S)
static uint32_t n_rto = 0, n_fr = 0;
static double tr0 = 1e9, tr1 = -1;
static bool in_window() { double t = Simulator::Now().GetSeconds(); return t >= tr0 && t <= tr1; }
static void on_state(TcpSocketState::TcpCongState_t o, TcpSocketState::TcpCongState_t n) {
  if (n == TcpSocketState::CA_LOSS && o != TcpSocketState::CA_LOSS) {
    n_rto++; if (in_window()) std::printf("  %.6f RTO\n", Simulator::Now().GetSeconds()); }
  if (n == TcpSocketState::CA_RECOVERY && o != TcpSocketState::CA_RECOVERY) n_fr++;
}
static void on_tx(Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>) {
  if (in_window()) std::printf("  %.6f send segment %u\n", Simulator::Now().GetSeconds(), (h.GetSequenceNumber().GetValue() - 1) / 958);
}
static void on_rx(Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>) {
  if (in_window()) std::printf("  %.6f ACK (next expected %u)\n", Simulator::Now().GetSeconds(), (h.GetAckNumber().GetValue() - 1) / 958);
}
static void on_cwnd(uint32_t o, uint32_t n) {
  if (in_window() && o / 958 != n / 958) std::printf("  %.6f cwnd %u -> %u\n", Simulator::Now().GetSeconds(), o / 958, n / 958);
}
static void on_queue(uint32_t o, uint32_t n) {
  if (in_window()) std::printf("  %.6f bottleneck queue %u -> %u\n", Simulator::Now().GetSeconds(), o, n);
}
static void on_txend(Ptr<const Packet>) {
  if (in_window()) std::printf("  %.6f bottleneck transmission ends\n", Simulator::Now().GetSeconds());
}
static Ptr<PointToPointNetDevice> bd_;
static Ptr<UniformRandomVariable> u_;
static double p_switch = 0, step = 0, high_bps = 0, ratio = 1, warm_ = 0, cap_pkts = 0, last_t = 0;
static bool low_ = false, instcap_ = false;
static double int_cap = 0;      // capacity (packets) since the last INSTCAP measurement
static Ptr<PointToPointNetDevice> src_;
static void account(double now) {   // bottleneck capacity, in packets, over (max(last, warm), now]
  double a = last_t > warm_ ? last_t : warm_;
  double rate = (low_ ? ratio : 1.0) / pkt_s;
  if (now > a) cap_pkts += (now - a) * rate;
  if (now > last_t) int_cap += (now - last_t) * rate;
  last_t = now;
}
static void measure() {   // INSTCAP: the source's rate = the capacity measured over the last interval
  account(Simulator::Now().GetSeconds());
  double bps = int_cap / step * pkt_s * high_bps;
  src_->SetDataRate(DataRate((uint64_t)(bps > 1000.0 ? bps : 1000.0)));
  int_cap = 0;
}
static void measure_tick() { measure(); Simulator::Schedule(Seconds(step), &measure_tick); }
static void epoch() {   // the simulator's embedded mode: a change with probability 1/psi every round trip
  account(Simulator::Now().GetSeconds());
  if (instcap_) measure();   // the interval that ends here, before the change
  if (u_->GetValue() < p_switch) {
    low_ = !low_;
    bd_->SetDataRate(DataRate((uint64_t)(high_bps * (low_ ? ratio : 1.0))));
  }
  Simulator::Schedule(Seconds(step), &epoch);
}
static void sojourn_end() {   // the continuous mode (psi < 1): exponential sojourns of mean psi round trips
  account(Simulator::Now().GetSeconds());
  low_ = !low_;
  bd_->SetDataRate(DataRate((uint64_t)(high_bps * (low_ ? ratio : 1.0))));
  Simulator::Schedule(Seconds(-std::log(1.0 - u_->GetValue()) * step / p_switch), &sojourn_end);
}
static void hook(Ptr<Application> app) {
  Ptr<Socket> s = DynamicCast<BulkSendApplication>(app)->GetSocket();
  s->TraceConnectWithoutContext("CongState", MakeCallback(&on_state));
  s->TraceConnectWithoutContext("Tx", MakeCallback(&on_tx));
  s->TraceConnectWithoutContext("Rx", MakeCallback(&on_rx));
  s->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&on_cwnd));
}
double run(double delta, uint32_t bq, bool fast_recovery, double min_rto, double duration, double warm,
           uint32_t wmax, double t0, double t1, double psi, double rate_ratio, uint32_t rep, bool instcap) {
  n_rto = 0; n_fr = 0; tr0 = t0; tr1 = t1;
  RngSeedManager::SetSeed(1); RngSeedManager::SetRun(1 + rep);
  const uint32_t mss = 958;
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(1));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 24));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(wmax * mss));
  Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(fast_recovery));
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(min_rto)));
  Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(fast_recovery ? 3 : 1000000));
  NodeContainer n; n.Create(3);
  PointToPointHelper acc; acc.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
  acc.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
  acc.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("100000p")));
  PointToPointHelper bot; bot.SetDeviceAttribute("DataRate", StringValue("1600kbps"));
  bot.SetChannelAttribute("Delay", TimeValue(Seconds(delta * pkt_s / 2.0)));
  bot.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(std::to_string(bq) + "p")));
  NetDeviceContainer d1 = acc.Install(n.Get(0), n.Get(1));
  NetDeviceContainer d2 = bot.Install(n.Get(1), n.Get(2));
  InternetStackHelper st; st.Install(n);
  Ipv4AddressHelper a; a.SetBase("10.1.1.0", "255.255.255.0"); a.Assign(d1);
  a.SetBase("10.1.2.0", "255.255.255.0"); Ipv4InterfaceContainer i2 = a.Assign(d2);
  TrafficControlHelper tch; tch.Uninstall(d1); tch.Uninstall(d2);   // the device queue is the buffer
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  Ptr<PointToPointNetDevice> bd = DynamicCast<PointToPointNetDevice>(d2.Get(0));
  bd_ = bd; u_ = CreateObject<UniformRandomVariable>(); warm_ = warm; cap_pkts = 0; last_t = 0; int_cap = 0;
  instcap_ = instcap; src_ = DynamicCast<PointToPointNetDevice>(d1.Get(0));
  high_bps = 1600000.0; ratio = rate_ratio; step = delta * pkt_s; p_switch = psi > 0 ? 1.0 / psi : 0.0;
  low_ = psi > 0 && u_->GetValue() < 0.5;    // stationary start: each level with probability 1/2
  bd->SetDataRate(DataRate((uint64_t)(high_bps * (low_ ? ratio : 1.0))));
  if (instcap) src_->SetDataRate(DataRate((uint64_t)(high_bps * (low_ ? ratio : 1.0))));
  if (instcap && psi < 1) Simulator::Schedule(Seconds(step), &measure_tick);
  if (psi >= 1) Simulator::Schedule(Seconds(step), &epoch);
  else if (psi > 0) Simulator::Schedule(Seconds(-std::log(1.0 - u_->GetValue()) * step / p_switch), &sojourn_end);
  bd->GetQueue()->TraceConnectWithoutContext("PacketsInQueue", MakeCallback(&on_queue));
  bd->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&on_txend));
  BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(i2.GetAddress(1), 9));
  src.SetAttribute("MaxBytes", UintegerValue(0));
  ApplicationContainer sa = src.Install(n.Get(0)); sa.Start(Seconds(0.0)); sa.Stop(Seconds(duration));
  PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
  ApplicationContainer ka = sink.Install(n.Get(2)); ka.Start(Seconds(0.0));
  Simulator::Schedule(Seconds(0.0001), &hook, sa.Get(0));
  Ptr<PacketSink> ps = DynamicCast<PacketSink>(ka.Get(0));
  uint64_t rx0 = 0;
  Simulator::Schedule(Seconds(warm), [&rx0, ps]() { rx0 = ps->GetTotalRx(); });
  Simulator::Stop(Seconds(duration));
  Simulator::Run();
  uint64_t rx1 = ps->GetTotalRx();
  account(duration);
  Simulator::Destroy();
  return (double)(rx1 - rx0) / mss / cap_pkts;
}
uint32_t rtos() { return n_rto; }
uint32_t fast_recoveries() { return n_fr; }
}
"""


def _fail(msg: str):
    """One line on stderr and exit status 2 (the project's CLI convention)."""
    print(msg, file=sys.stderr)
    raise SystemExit(2)


def _ns3():
    """The compiled C++ scenario, or a one-line SystemExit if ns-3's bindings are absent."""
    try:
        from ns import ns  # noqa: F401  (loads libns3 into cppyy)
        import cppyy
    except Exception as exc:   # ImportError, or a broken cppyy build
        _fail(f"ns-3's Python bindings are not installed ({type(exc).__name__}): "
              "pip install ns3==3.44.post0 (kept out of the base install)")
    cppyy.cppdef(_CPP)
    return cppyy.gbl.tcpabr_ns3


def simulator_efficiency(delta: float, bq: int, variant: str, min_rto: float, duration: float, psi: float,
                         reps: int, feedback: str = "none"):
    """The cell simulator at the same point: ``bmax = B + 1``, RFC 6298 timer with ``min_rto``;
    with ``psi > 0`` the two-state link (rate ratio 0.5) in the embedded mode (a change with
    probability 1 / psi every round trip; below psi 1, which that mode refuses, exponential
    sojourns of mean psi round trips). Returns (mean, 95 % half-width, timeouts and fast
    retransmits per replication)."""
    from tcpabr_model.sim import Scenario, TcpConfig, simulate
    tcp = TcpConfig(variant=variant, wmax=128, rto="estimator", rto_min=min_rto)
    two = psi > 0
    sc = Scenario.from_normalized(delta=delta, bmax=bq + 1, psi=psi if two else 20.0, rate_ratio=0.5 if two else 1.0,
                                  feedback=feedback, tcp=tcp, duration_units=duration / PKT_S,
                                  **({"interval": delta * PKT_S, "feedback_delay": 0.0} if feedback == "instcap" else {}),
                                  capacity_mode="embedded" if psi >= 1 else "continuous")
    r = simulate(sc, replications=reps, seed=1)
    c = r.counters
    e = r.efficiency_wire
    return e.mean, e.half_width if e.has_interval else 0.0, c["timeouts"] / reps, c["fast_retransmits"] / reps


def _numbers(text: str, name: str, kind=int, low=1) -> list:
    try:
        vals = [kind(v) for v in text.split(",") if v.strip()]
    except ValueError:
        _fail(f"{name} must be comma-separated {'integers' if kind is int else 'numbers'}, got {text!r}")
    if not vals or min(vals) < low:
        _fail(f"{name} must be {'integers' if kind is int else 'numbers'} >= {low}, got {text!r}")
    return vals


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--delta", type=float, default=40.0, help="round trip in packet times (default 40)")
    ap.add_argument("--buffers", default="6,8,9,10,11,12,13,14,16,20",
                    help="ns-3 device-queue sizes B in packets (the simulator's bmax is B + 1)")
    ap.add_argument("--psi", default="0", help="comma-separated psi of the two-state link (rate ratio 0.5, "
                    "embedded); 0 = constant capacity (default)")
    ap.add_argument("--replications", type=int, default=None,
                    help="runs per point (default 1 at constant capacity, 3 on the two-state link)")
    ap.add_argument("--variants", default="timeout-only,sack")
    ap.add_argument("--feedback", default="none", help="none (TCP alone, default) or instcap: the source's "
                    "access link runs at the capacity measured over the last round trip, no feedback delay")
    ap.add_argument("--min-rto", type=float, default=None, help="seconds (default 2 Delta)")
    ap.add_argument("--duration", type=float, default=600.0, help="seconds per run (default 600; 10 s warm-up)")
    ap.add_argument("--quick", action="store_true", help="buffers 8,10,12 and 120 s")
    ap.add_argument("--trace", default=None, help="B,T0,T1: ns-3's event trace at buffer B (timeout-only, constant)")
    a = ap.parse_args(argv)
    if a.delta <= 0:
        _fail(f"--delta must be > 0, got {a.delta}")
    min_rto = 2 * a.delta * PKT_S if a.min_rto is None else a.min_rto
    if min_rto <= 0:
        _fail(f"--min-rto must be > 0 seconds, got {min_rto}")
    variants = [v for v in a.variants.split(",") if v]
    bad = [v for v in variants if v not in ("timeout-only", "sack")]
    if bad:
        _fail(f"--variants must be timeout-only and/or sack, got {','.join(bad)}")
    if a.feedback not in ("none", "instcap"):
        _fail(f"--feedback must be none or instcap, got {a.feedback!r}")
    if a.feedback == "instcap" and a.trace:
        _fail("--trace is for TCP alone (--feedback none)")
    buffers = [8, 10, 12] if a.quick else _numbers(a.buffers, "--buffers")
    psis = _numbers(a.psi, "--psi", float, 0)
    if a.replications is not None and a.replications < 1:
        _fail(f"--replications must be >= 1, got {a.replications}")
    duration = 120.0 if a.quick else a.duration
    if duration <= 10.0:
        _fail(f"--duration must be > 10 seconds (the warm-up), got {duration}")
    if a.trace:
        try:
            bq, t0, t1 = int(a.trace.split(",")[0]), *(float(v) for v in a.trace.split(",")[1:])
        except ValueError:
            _fail(f"--trace must be B,T0,T1 (integer, seconds, seconds), got {a.trace!r}")
        if bq < 1 or not 0 <= t0 < t1:
            _fail(f"--trace must have B >= 1 and 0 <= T0 < T1, got {a.trace!r}")
    ns3 = _ns3()
    if a.trace:
        e = ns3.run(a.delta, bq, False, min_rto, t1 + 0.01, min(10.0, t1 / 2), 128, t0, t1, 0.0, 1.0, 0, False)
        print(f"(trace of B = {bq}, timeout-only, {t0}-{t1} s; efficiency to {t1:.1f} s: {e:.4f})")
        return 0
    print(f"feedback {a.feedback}; Delta {a.delta:g} packets, 5 ms per packet, min RTO {min_rto:g} s, {duration:g} s per run; "
          "efficiency = segments delivered / bottleneck capacity (its time average); +- 95 % half-widths")
    print(f"{'variant':>13} {'psi':>5} {'B':>3} {'bmax':>4} | {'ns-3':>15} {'RTOs':>6} {'FR':>6} | {'simulator':>15} "
          f"{'TOs':>6} {'FR':>6} | {'sim - ns-3':>10} {'CI+5%':>5} | {'L-M':>6}")
    n_ok = n_all = 0
    for v in variants:
        for psi in psis:
            reps = a.replications or (3 if psi > 0 else 1)
            for bq in buffers:
                t = time.time()
                runs, tos3, frs3 = [], 0, 0
                for rep in range(reps):
                    runs.append(ns3.run(a.delta, bq, v == "sack", min_rto, duration, 10.0, 128, 1e9, -1.0,
                                        psi, 0.5 if psi > 0 else 1.0, rep, a.feedback == "instcap"))
                    tos3 += ns3.rtos()
                    frs3 += ns3.fast_recoveries()
                est = Estimate.from_samples(runs)
                e3, h3 = est.mean, est.half_width if est.has_interval else 0.0
                es, hs, tos, frs = simulator_efficiency(a.delta, bq, v, min_rto, duration, psi, reps, a.feedback)
                ok = abs(es - e3) <= h3 + hs + 0.05 * e3
                n_ok += ok
                n_all += 1
                lm = reno_efficiency(a.delta, bq + 1) if v == "sack" and psi == 0 else float("nan")
                print(f"{v:>13} {psi:5g} {bq:>3} {bq + 1:>4} | {e3:7.4f} +- {h3:.4f} {tos3 / reps:6.0f} {frs3 / reps:6.0f} | "
                      f"{es:7.4f} +- {hs:.4f} {tos:6.0f} {frs:6.0f} | {es / e3 - 1:+9.1%} {'yes' if ok else 'no':>5} | "
                      f"{lm:6.4f}   ({time.time() - t:.0f} s)", flush=True)
    print(f"simulator within CI + 5 % of ns-3 at {n_ok} of {n_all} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
