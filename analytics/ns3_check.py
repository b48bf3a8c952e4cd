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
(``ReTxThreshold`` 10^6, no SACK), ``sack`` is ns-3's default recovery (SACK + PRR; ``--prr
rfc6937`` replaces ns-3.44's ``TcpPrrRecovery``, which sends about one new segment per duplicate
ACK early in a recovery, by RFC 6937's as ns-3-dev restored it in 2026, issues #1350 and #1351). The
simulator runs ``TcpConfig(rto='estimator', rto_min=--min-rto)``, 4 replications (constant
capacity: identical), the same duration.

``--psi 0.3,1,2,10,50`` runs the two-state link instead (rate ratio 0.5, a change with
probability 1 / psi at every round trip from time 0: the simulator's embedded mode; below
psi 1 exponential sojourns of mean psi round trips, its continuous mode; the
efficiency is over the time-average capacity of each run), 3 replications by default.

``--feedback instcap`` emulates INSTCAP without cells: the sender's access link (its device
queue unlimited: the segmentation buffer) runs at the bottleneck capacity averaged over the
last round trip, set at each round trip's end (the simulator with ``interval`` = one round
trip and ``feedback_delay`` 0, the validity map's Fig. 8/9 setting). ``--feedback effcap`` does
the same with eq. 28 over those per-round-trip measurements: the minimum of the last ``N``
means of ``M`` measurements, with the paper's rule at ``s`` = Delta, ``M : Delta`` = 1 and
``N : k Delta`` = ``k - 1`` (``--effcap-k``, default 8: the simulator's default rule).

``--trace B,T0,T1`` prints ns-3's event trace (segments sent, ACKs, the window, timeouts, the
bottleneck queue's length and transmission ends) between T0 and T1 seconds at buffer B, for the
first of ``--variants`` on the first ``--psi`` with ``--feedback`` and ``--prr`` (one run,
seed 1): what docs/simulator.md quotes for the slow start that loses at constant capacity
(``--variants timeout-only --trace 10,28.25,28.31``) and for the psi 1 orbits (``--psi 1
--variants timeout-only --trace 10,57.6,58.9``; ``--psi 1 --feedback instcap --variants sack
--trace 10,20,100``).

    python analytics/ns3_check.py [--quick] [--buffers 6,8,10] [--variants sack] [--psi 1,10]
        [--feedback none|instcap|effcap] [--effcap-k 8] [--prr ns3|rfc6937]
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
static bool low_ = false, rated_ = false;   // rated_: INSTCAP or EFFCAP sets the source's rate
static uint32_t em_ = 1, en_ = 1;          // EFFCAP's M and N (eq. 28); 1, 1 is INSTCAP
static std::vector<double> xh_, av_;       // the measurements x_j and the block means A_j
static double int_cap = 0;      // capacity (packets) since the last INSTCAP measurement
static Ptr<PointToPointNetDevice> src_;
static void account(double now) {   // bottleneck capacity, in packets, over (max(last, warm), now]
  double a = last_t > warm_ ? last_t : warm_;
  double rate = (low_ ? ratio : 1.0) / pkt_s;
  if (now > a) cap_pkts += (now - a) * rate;
  if (now > last_t) int_cap += (now - last_t) * rate;
  last_t = now;
}
static void measure() {   // the source's rate = eq. 28 over the capacities measured per interval
  account(Simulator::Now().GetSeconds());
  xh_.push_back(int_cap / step * pkt_s);      // x_j: the interval's mean capacity over the high rate
  size_t k = xh_.size(), m = em_ < k ? em_ : k, n = en_ < k ? en_ : k;
  double s = 0;
  for (size_t i = k - m; i < k; i++) s += xh_[i];
  av_.push_back(s / m);                       // A_j, the mean of the last M measurements
  double fb = av_[k - n];
  for (size_t j = k - n; j < k; j++) fb = av_[j] < fb ? av_[j] : fb;   // min of the last N means
  double bps = fb * high_bps;
  src_->SetDataRate(DataRate((uint64_t)(bps > 1000.0 ? bps : 1000.0)));
  int_cap = 0;
}
static void measure_tick() { measure(); Simulator::Schedule(Seconds(step), &measure_tick); }
static void epoch() {   // the simulator's embedded mode: a change with probability 1/psi every round trip
  account(Simulator::Now().GetSeconds());
  if (rated_) measure();   // the interval that ends here, before the change
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
// RFC 6937 PRR as ns-3-dev has it since its fixes #1350 and #1351 (July 2026, after 3.46.1), on
// 3.44's interface: RecoverFS = FlightSize (SND.NXT - SND.UNA) at the start of recovery, and no
// "+1 segment per duplicate ACK" on top of the SACK-derived DeliveredData. ns-3.44's own
// TcpPrrRecovery takes RecoverFS from the pipe and adds the segment, so it sends about one new
// segment per duplicate ACK early in a recovery where PRR sends about one per two.
class Rfc6937Prr : public TcpRecoveryOps {
 public:
  static TypeId GetTypeId() {
    static TypeId tid = TypeId("tcpabr_ns3::Rfc6937Prr").SetParent<TcpRecoveryOps>()
                            .AddConstructor<Rfc6937Prr>().SetGroupName("Internet");
    return tid;
  }
  std::string GetName() const override { return "Rfc6937Prr"; }
  void EnterRecovery(Ptr<TcpSocketState> tcb, uint32_t, uint32_t unAckDataCount, uint32_t deliveredBytes) override {
    out_ = 0; delivered_ = 0; recover_fs_ = std::max(unAckDataCount, tcb->m_segmentSize);
    DoRecovery(tcb, deliveredBytes, true);
  }
  void DoRecovery(Ptr<TcpSocketState> tcb, uint32_t deliveredBytes, bool isDupAck) override {
    (void)isDupAck;   // every recovery here has SACK (fast recovery runs for `sack` only): no estimate
    if (deliveredBytes == 0) return;
    delivered_ += deliveredBytes;
    int64_t send;
    if (tcb->m_bytesInFlight > tcb->m_ssThresh) {   // the proportional part
      uint64_t d = (uint64_t)delivered_ * (uint64_t)tcb->m_ssThresh.Get();
      send = (int64_t)(d / recover_fs_ + (d % recover_fs_ != 0)) - (int64_t)out_;
    } else {                                         // PRR-CRB, PRR-SSRB on a safe ACK (as ns-3)
      int64_t limit = std::max<int64_t>((int64_t)delivered_ - (int64_t)out_, (int64_t)deliveredBytes);
      if (tcb->m_isRetransDataAcked) limit += tcb->m_segmentSize;
      send = std::min<int64_t>(limit, (int64_t)tcb->m_ssThresh.Get() - (int64_t)tcb->m_bytesInFlight.Get());
    }
    send = std::max<int64_t>(send, out_ > 0 ? 0 : (int64_t)tcb->m_segmentSize);   // the fast retransmit
    tcb->m_cWnd = tcb->m_bytesInFlight.Get() + (uint32_t)send;
    tcb->m_cWndInfl = tcb->m_cWnd;
  }
  void ExitRecovery(Ptr<TcpSocketState> tcb) override { tcb->m_cWndInfl = tcb->m_cWnd; }
  void UpdateBytesSent(uint32_t bytesSent) override { out_ += bytesSent; }
  Ptr<TcpRecoveryOps> Fork() override { return CopyObject<Rfc6937Prr>(this); }
 private:
  uint32_t out_ = 0, delivered_ = 0, recover_fs_ = 1;
};
static void hook(Ptr<Application> app) {
  Ptr<Socket> s = DynamicCast<BulkSendApplication>(app)->GetSocket();
  s->TraceConnectWithoutContext("CongState", MakeCallback(&on_state));
  s->TraceConnectWithoutContext("Tx", MakeCallback(&on_tx));
  s->TraceConnectWithoutContext("Rx", MakeCallback(&on_rx));
  s->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&on_cwnd));
}
double run(double delta, uint32_t bq, bool fast_recovery, double min_rto, double duration, double warm,
           uint32_t wmax, double t0, double t1, double psi, double rate_ratio, uint32_t rep, bool rated,
           uint32_t em, uint32_t en, bool rfc6937_prr) {
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
  Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                     TypeIdValue(rfc6937_prr ? Rfc6937Prr::GetTypeId() : TcpPrrRecovery::GetTypeId()));
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
  rated_ = rated; em_ = em; en_ = en; xh_.clear(); av_.clear(); src_ = DynamicCast<PointToPointNetDevice>(d1.Get(0));
  high_bps = 1600000.0; ratio = rate_ratio; step = delta * pkt_s; p_switch = psi > 0 ? 1.0 / psi : 0.0;
  low_ = psi > 0 && u_->GetValue() < 0.5;    // stationary start: each level with probability 1/2
  bd->SetDataRate(DataRate((uint64_t)(high_bps * (low_ ? ratio : 1.0))));
  if (rated) src_->SetDataRate(DataRate((uint64_t)(high_bps * (low_ ? ratio : 1.0))));
  if (rated && psi < 1) Simulator::Schedule(Seconds(step), &measure_tick);
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
                         reps: int, feedback: str = "none", effcap_n: int = 7):
    """The cell simulator at the same point: ``bmax = B + 1``, RFC 6298 timer with ``min_rto``;
    with ``psi > 0`` the two-state link (rate ratio 0.5) in the embedded mode (a change with
    probability 1 / psi every round trip; below psi 1, which that mode refuses, exponential
    sojourns of mean psi round trips); INSTCAP and EFFCAP measured over one round trip (EFFCAP with
    M = 1 and N = ``effcap_n``), no feedback delay. Returns (mean, 95 % half-width, timeouts and fast
    retransmits per replication)."""
    from tcpabr_model.sim import Scenario, TcpConfig, simulate
    tcp = TcpConfig(variant=variant, wmax=128, rto="estimator", rto_min=min_rto)
    two = psi > 0
    sc = Scenario.from_normalized(delta=delta, bmax=bq + 1, psi=psi if two else 20.0, rate_ratio=0.5 if two else 1.0,
                                  feedback=feedback, tcp=tcp, duration_units=duration / PKT_S,
                                  **({"interval": delta * PKT_S, "feedback_delay": 0.0} if feedback != "none" else {}),
                                  **({"m": (1,), "n": (effcap_n,)} if feedback == "effcap" else {}),
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
    ap.add_argument("--feedback", default="none", help="none (TCP alone, default), instcap or effcap: the source's "
                    "access link runs at the capacity measured over the last round trip (effcap: eq. 28 over those "
                    "measurements), no feedback delay")
    ap.add_argument("--effcap-k", type=int, default=8, help="EFFCAP's N : k Delta with s = Delta, i.e. N = k - 1 "
                    "round trips and M = 1 (default 8, the paper's rule and the simulator's default)")
    ap.add_argument("--prr", default="ns3", help="ns-3's SACK recovery: ns3 (ns-3.44's TcpPrrRecovery, default) or "
                    "rfc6937 (RFC 6937 as ns-3-dev has it since its fixes #1350 and #1351: RecoverFS = FlightSize, "
                    "no extra segment per duplicate ACK with SACK)")
    ap.add_argument("--min-rto", type=float, default=None, help="seconds (default 2 Delta)")
    ap.add_argument("--duration", type=float, default=600.0, help="seconds per run (default 600; 10 s warm-up)")
    ap.add_argument("--quick", action="store_true", help="buffers 8,10,12 and 120 s")
    ap.add_argument("--trace", default=None, help="B,T0,T1: ns-3's event trace at buffer B (the first variant, "
                    "the first psi, the feedback given)")
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
    if a.feedback not in ("none", "instcap", "effcap"):
        _fail(f"--feedback must be none, instcap or effcap, got {a.feedback!r}")
    if a.prr not in ("ns3", "rfc6937"):
        _fail(f"--prr must be ns3 or rfc6937, got {a.prr!r}")
    if a.effcap_k < 2:
        _fail(f"--effcap-k must be an integer >= 2, got {a.effcap_k}")
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
    effcap_n = a.effcap_k - 1 if a.feedback == "effcap" else 1   # eq. 28's N; 1 is INSTCAP (and unused alone)
    ns3 = _ns3()
    if a.trace:
        psi, v = psis[0], variants[0]
        e = ns3.run(a.delta, bq, v == "sack", min_rto, t1 + 0.01, min(10.0, t1 / 2), 128, t0, t1, psi,
                    0.5 if psi > 0 else 1.0, 0, a.feedback != "none", 1, effcap_n, a.prr == "rfc6937")
        print(f"(trace of B = {bq}, {v}, psi {psi:g}, feedback {a.feedback}, {t0}-{t1} s; efficiency to {t1:.1f} s: "
              f"{e:.4f})")
        return 0
    fb = f"effcap (M 1, N {a.effcap_k - 1}, s = Delta)" if a.feedback == "effcap" else a.feedback
    print(f"feedback {fb}; ns-3 PRR {a.prr}; Delta {a.delta:g} packets, 5 ms per packet, min RTO {min_rto:g} s, {duration:g} s per run; "
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
                                        psi, 0.5 if psi > 0 else 1.0, rep, a.feedback != "none",
                                        1, effcap_n, a.prr == "rfc6937"))
                    tos3 += ns3.rtos()
                    frs3 += ns3.fast_recoveries()
                est = Estimate.from_samples(runs)
                e3, h3 = est.mean, est.half_width if est.has_interval else 0.0
                es, hs, tos, frs = simulator_efficiency(a.delta, bq, v, min_rto, duration, psi, reps, a.feedback,
                                                        effcap_n)
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
