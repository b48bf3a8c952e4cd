"""The single-bottleneck fast path and the general network kernel give identical counters on
every configuration the fast path accepts (hypothesis over scenarios); each kernel equals
itself without JIT on a small case."""

import json
import os
import subprocess
import sys

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcpabr_model.sim import Scenario, TcpConfig
from tcpabr_model.sim.arrays import layout as L
from tcpabr_model.sim.tcp.variants import VARIANTS

from _kernels import fast_vs_general


@st.composite
def scenarios(draw):
    n = draw(st.integers(1, 3))
    deltas = [draw(st.sampled_from([8, 20, 40, 60])) for _ in range(n)]
    fb = draw(st.sampled_from(["instcap", "effcap", "none", "constant"]))
    kw = {}
    if fb == "constant":
        kw["initial_rate"] = draw(st.sampled_from([0.3, 0.7, 1.0]))
    tcp = TcpConfig(variant=draw(st.sampled_from(VARIANTS)), rto=draw(st.sampled_from(["fixed", "estimator"])),
                    delayed_ack=draw(st.booleans()), wmax=draw(st.sampled_from([8, 32, 128])))
    return Scenario.from_normalized(delta=deltas if n > 1 else deltas[0], bmax=draw(st.integers(1, 20)),
                                    psi=draw(st.sampled_from([0.5, 2.0, 10.0])),
                                    rate_ratio=draw(st.sampled_from([0.25, 0.5, 1.0])), feedback=fb, tcp=tcp,
                                    discard=draw(st.sampled_from(["ppd", "epd"])), duration=20.0, warmup=1.0,
                                    **kw)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=scenarios(), seed=st.integers(0, 2**32))
def test_fast_path_and_general_kernel_give_identical_counters(sc, seed):
    fast_vs_general(sc, seed)


_SMALL = """
import json, numpy as np
from tcpabr_model.sim import Scenario, TcpConfig
from tcpabr_model.sim.driver import run_replication
from tcpabr_model.sim.driver import run_network_replication
sc = Scenario.from_normalized(delta=[20, 30], bmax=4, psi=1, feedback="effcap", duration=3.0, warmup=0.5,
                              tcp=TcpConfig(variant="newreno"))
a = run_replication(sc, np.random.default_rng(3), trace=False)[0][0]
b = run_network_replication(sc.to_network(), np.random.default_rng(3))[0][0]
print(json.dumps([a.tolist(), b.tolist()]))
"""


def test_each_kernel_equals_itself_without_jit():
    out = {}
    for jit in ("0", "1"):
        env = dict(os.environ, NUMBA_DISABLE_JIT=jit)
        r = subprocess.run([sys.executable, "-c", _SMALL], env=env, capture_output=True, text=True, check=True)
        out[jit] = json.loads(r.stdout)
    assert out["0"] == out["1"]
    assert np.asarray(out["0"][0])[:, L.S_GOODALL].sum() > 0


def test_the_removed_net_package_is_gone():
    """``tcpabr_model.net`` (the deprecation shim of issue 14) was removed by issue 22 (CHANGELOG.md)."""
    r = subprocess.run([sys.executable, "-c", "import tcpabr_model.net"], capture_output=True, text=True)
    assert r.returncode != 0 and "No module named 'tcpabr_model.net'" in r.stderr
