"""The statistics of `planner trace stats`, computed with pandas: the baseline
that docs/benchmarks.md times against the Rust reader on the same file.

Usage: python3 benches/trace_stats_pandas.py TRACE.csv
"""
import json
import sys

import numpy as np
import pandas as pd


def windows(ts_s: pd.Series, width_s: int) -> dict:
    idx = np.floor(ts_s / width_s).astype(np.int64)
    counts = np.bincount(idx - idx.min())  # clock-aligned, empty windows count as zero
    mean = counts.mean()
    return {
        "windows": int(counts.size),
        "mean": float(mean),
        "p50": float(np.percentile(counts, 50, method="inverted_cdf")),
        "p99": float(np.percentile(counts, 99, method="inverted_cdf")),
        "max": float(counts.max()),
        "peak_to_mean": float(counts.max() / mean),
    }


def lengths(s: pd.Series) -> dict:
    q = np.percentile(s, [50, 90, 99], method="inverted_cdf")
    return {"mean": float(s.mean()), "p50": int(q[0]), "p90": int(q[1]), "p99": int(q[2]), "max": int(s.max())}


def main(path: str) -> None:
    df = pd.read_csv(path)
    ts = pd.to_datetime(df["TIMESTAMP"], format="ISO8601", utc=True)
    t = (ts - pd.Timestamp("1970-01-01", tz="UTC")).dt.total_seconds()
    gaps = np.diff(t.to_numpy())
    span = float(t.iloc[-1] - t.iloc[0])
    out = {
        "requests": int(len(df)),
        "span_s": span,
        "mean_rps": len(df) / span,
        "interarrival_cv": float(gaps.std() / gaps.mean()),
        "per_second": windows(t, 1),
        "per_minute": windows(t, 60),
        "per_hour": windows(t, 3600),
        "input_tokens": lengths(df["ContextTokens"]),
        "output_tokens": lengths(df["GeneratedTokens"]),
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main(sys.argv[1])
