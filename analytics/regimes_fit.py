"""The two-timescale capacity chain against the one-timescale one, on the trace alone (issue
23 item 1b, ``docs/traces.md`` sec. 4a).

For each shared trace (or ``--traces``) and each epoch (the study's round trips, 20, 50 and
100 ms), the one-timescale k-means chain (K by the EC criterion, at most 8) and the regime x
level chains ``regimes = 2, 3, 4`` (K / R levels per regime, ``fit_trace(..., regimes=R)``,
regime window = the e-folding time of the trace's autocorrelation) are fitted to the
**first half** of the trace and compared with the **second half** (and with the first): the
autocorrelation of the epoch capacity at lags of 1 epoch to about 8 s, its largest gap
(the criterion of this table: how well the chain keeps the link's correlation at every time
scale), and the effective-capacity error of the fit.  No TCP is simulated here; the TCP
comparison on held-out data is ``analytics/traces.py --regimes R`` (sec. 7.4).

Usage::

    python analytics/regimes_fit.py [--traces FILE ...] [--epochs 0.02,0.05,0.1]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import tcpabr_model.capacity as cap  # noqa: E402
from tcpabr_model.trace_study import trace_halves  # noqa: E402

SHARED = ROOT.parent / "shared" / "traces"
TRACES = ("Verizon-LTE-short.down", "TMobile-LTE-short.down", "TMobile-UMTS-driving.down")
LAG_SECONDS = (0.1, 0.5, 1.0, 2.0, 4.0, 8.0)
MODELS = ((1, None), (2, 8), (3, 9), (4, 8))   # (regimes, K): K = None is the automatic one-timescale fit


def rows(path, epoch):
    tr = cap.read_trace(path)
    first, second = trace_halves(tr)
    lags = sorted({max(1, int(round(s / epoch))) for s in (epoch,) + LAG_SECONDS})
    acf_fit = cap.trace_autocorrelation(cap.bin_trace(first, epoch).rates, lags)
    acf_held = cap.trace_autocorrelation(cap.bin_trace(second, epoch).rates, lags)
    out = [("first half (fitted)", None, None, acf_fit, None, None), ("second half (held out)", None, None, acf_held,
                                                                        None, None)]
    for regimes, k in MODELS:
        f = cap.fit_trace(first, states=k, epoch=epoch, regimes=regimes)
        a = cap.chain_autocorrelation(f.model, lags)
        out.append((f"R = {regimes}, K = {f.states}" + (f", window {f.regime_window:g} s" if regimes > 1 else ""),
                    np.max(np.abs(a - acf_fit)), np.max(np.abs(a - acf_held)), a, f.ec_error, f))
    return lags, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", nargs="+", default=None)
    ap.add_argument("--epochs", default="0.02,0.05,0.1")
    a = ap.parse_args(argv)
    paths = a.traces or [str(SHARED / t) for t in TRACES]
    if not a.traces and not SHARED.is_dir():
        print(f"{SHARED} does not exist: give --traces FILE ...")
        return 0
    for path in paths:
        for epoch in (float(x) for x in a.epochs.split(",")):
            lags, out = rows(path, epoch)
            print(f"\n**{Path(path).name}, epoch {epoch * 1000:g} ms** (fitted on the first half)\n")
            print("| chain | " + " | ".join(f"lag {l * epoch:g} s" for l in lags)
                  + " | max ACF gap, fitted half | max ACF gap, held-out half | EC error |")
            print("|---" * (len(lags) + 4) + "|")
            for name, g_fit, g_held, acf, ec, _ in out:
                cells = " | ".join(f"{x:.2f}" for x in acf)
                tail = (" | - | - | -" if g_fit is None else f" | {g_fit:.2f} | {g_held:.2f} | {ec:.3f}")
                print(f"| {name} | {cells}{tail} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
