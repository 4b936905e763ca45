#!/usr/bin/env python3
"""A straightforward discrete-event model of the same serving semantics as
`planner simulate`, in plain Python: the peer the Rust simulator is timed
against in docs/benchmarks.md (Vidur, the obvious peer, needs its profiling
datasets from the Hugging Face Hub, which this machine cannot reach).

Same semantics as src/sim (continuous batching, chunked prefill with a token
budget, FIFO admission under a batch cap and a KV-cache limit, preemption of
the latest admitted sequence with recompute, least-outstanding-work router,
roofline step times), but every engine step is its own event — the usual way
such a simulator is written.

Usage:
  python3 benches/sim_python.py --plan target/bench/week-plan.json \
      --trace target/bench/week.csv --slot 12 --ttft-ms 1000 --tpot-ms 60
"""
import argparse
import heapq
import json
import time
import tomllib
from collections import deque
from datetime import datetime, timezone


def perf_model(gpu, model, tp):
    flops = (gpu["fp8_tflops"] if model["bytes_per_weight"] <= 1 else gpu["bf16_tflops"]) * 1e12
    rate_c = tp * gpu["compute_efficiency"] * flops
    rate_m = tp * gpu["bandwidth_efficiency"] * gpu["memory_bandwidth_tb_s"] * 1e12
    params = model["active_params_billion"] * 1e9
    weights = model["params_billion"] * 1e9 * model["bytes_per_weight"]
    kv_token = 2 * model["layers"] * model["kv_heads"] * model["head_dim"] * model["kv_bytes_per_element"]
    lhd = model["layers"] * model["heads"] * model["head_dim"]
    link = gpu["interconnect_gb_s"] * 1e9
    hop = gpu["hop_latency_us"] * 1e-6
    overhead = gpu["step_overhead_ms"] * 1e-3 + model["layers"] * gpu.get("layer_overhead_us", 0.0) * 1e-6

    def step_s(tokens, pairs, kv_read):
        if tokens <= 0:
            return 0.0
        compute = (2 * params * tokens + 4 * lhd * pairs) / rate_c
        memory = (min(params * max(tokens, 1), model["params_billion"] * 1e9) * model["bytes_per_weight"]
                  + kv_read * kv_token) / rate_m
        ar = 0.0
        if tp > 1:
            msg = tokens * model["hidden"] * 2
            ar = 2 * model["layers"] * (2 * (tp - 1) / tp * msg / link + hop)
        return max(compute, memory) + ar + overhead

    usable = gpu["memory_gb"] * 1e9 * gpu["usable_memory_fraction"]
    kv_capacity = int(max(0.0, (usable - weights / tp) * tp / kv_token))
    return step_s, kv_capacity


class Req:
    __slots__ = ("arrival", "inp", "out", "target", "prefilled", "generated", "first", "admit_seq")

    def __init__(self, arrival, inp, out):
        self.arrival, self.inp, self.out = arrival, max(inp, 1), max(out, 1)
        self.target, self.prefilled, self.generated = self.inp, 0, 0
        self.first, self.admit_seq = None, 0


class Replica:
    def __init__(self, step_s, kv_capacity, max_batch, budget, weight):
        self.step_s, self.kv_cap, self.max_batch, self.budget = step_s, kv_capacity, max_batch, budget
        self.weight = weight
        self.waiting, self.prefilling, self.decoding = deque(), [], []
        self.kv_used, self.busy, self.chunks, self.seq = 0, False, [], 0
        self.outstanding, self.in_system = 0, 0

    def start(self, now):
        while self.decoding and self.kv_used + len(self.decoding) > self.kv_cap:
            victim = max(self.prefilling + self.decoding, key=lambda r: r.admit_seq)
            if victim in self.prefilling:
                self.prefilling.remove(victim)
                self.kv_used -= victim.target
                self.outstanding += victim.prefilled
            else:
                self.decoding.remove(victim)
                self.kv_used -= victim.inp + victim.generated - 1
                victim.target = victim.inp + victim.generated
                self.outstanding += victim.target
            victim.prefilled = 0
            self.waiting.appendleft(victim)
        batch = len(self.decoding)
        budget = max(0, self.budget - batch)
        self.chunks = []
        for r in self.prefilling:
            if budget == 0:
                break
            c = min(r.target - r.prefilled, budget)
            self.chunks.append((r, c))
            budget -= c
        while budget > 0 and self.waiting:
            r = self.waiting[0]
            if len(self.prefilling) + len(self.decoding) >= self.max_batch or self.kv_used + r.target + 1 > self.kv_cap:
                break
            self.waiting.popleft()
            r.admit_seq = self.seq
            self.seq += 1
            self.kv_used += r.target
            self.prefilling.append(r)
            c = min(r.target, budget)
            self.chunks.append((r, c))
            budget -= c
        if batch == 0 and not self.chunks:
            return None
        context = sum(r.inp + r.generated for r in self.decoding)
        tokens, pairs, kv_read = batch, context, context
        for r, c in self.chunks:
            tokens += c
            pairs += c * r.prefilled + c * c / 2
            kv_read += r.prefilled
        self.busy = True
        self.step_batch = list(self.decoding)
        return now + self.step_s(tokens, pairs, kv_read)

    def end(self, now, done):
        self.busy = False
        for r in self.step_batch:
            r.generated += 1
            self.kv_used += 1
        for r, c in self.chunks:
            r.prefilled += c
            self.outstanding -= c
            if r.prefilled == r.target:
                self.prefilling.remove(r)
                if r.first is None:
                    r.first = now
                r.generated = r.target - r.inp + 1
                if r.generated >= r.out:
                    self.kv_used -= r.target
                    self.in_system -= 1
                    done.append((r, now))
                else:
                    self.decoding.append(r)
        still = []
        for r in self.decoding:
            if r.generated >= r.out:
                self.kv_used -= r.inp + r.generated - 1
                self.in_system -= 1
                done.append((r, now))
            else:
                still.append(r)
        self.decoding = still


def read_slot(path, slot):
    day, hour = divmod(slot, 24)
    rows = []
    with open(path) as f:
        next(f)
        first = None
        for line in f:
            ts, inp, out = line.rstrip("\n").split(",")
            t = datetime.fromisoformat(ts).timestamp()
            if first is None:
                first = (t // 3600) * 3600
            rel = t - first
            if rel < slot * 3600:
                continue
            if rel >= (slot + 1) * 3600:
                break
            rows.append((rel - slot * 3600, int(inp), int(out)))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plan", required=True)
    ap.add_argument("--trace", required=True)
    ap.add_argument("--slot", type=int, required=True)
    ap.add_argument("--profiles", default="profiles")
    ap.add_argument("--model", default="llama-3.1-70b")
    ap.add_argument("--max-batched-tokens", type=int, default=8192)
    ap.add_argument("--ttft-ms", type=float, required=True)
    ap.add_argument("--tpot-ms", type=float, required=True)
    a = ap.parse_args()
    plan = json.load(open(a.plan))
    model = tomllib.load(open(f"{a.profiles}/models/{a.model}.toml", "rb"))
    replicas = []
    for tier in plan["tiers"].values():
        for c in tier["configurations"]:
            gpu = tomllib.load(open(f"{a.profiles}/gpus/{c['gpu_type']}.toml", "rb"))
            step_s, kv = perf_model(gpu, model, c["tensor_parallel"])
            for _ in range(c["replicas_by_slot"][a.slot]):
                replicas.append(Replica(step_s, kv, c["max_batch"], a.max_batched_tokens, c["rps_per_replica"]))
    rows = read_slot(a.trace, a.slot)
    mean_out = sum(r[2] for r in rows) / len(rows)
    started = time.perf_counter()
    events, seq = [], 0
    for t, inp, out in rows:
        events.append((t, seq, "arrival", Req(t, inp, out)))
        seq += 1
    heapq.heapify(events)
    done, ttfts, tpots, met = [], [], [], 0
    while events:
        now, _, kind, obj = heapq.heappop(events)
        if kind == "arrival":
            rep = min(replicas, key=lambda r: (r.outstanding + r.in_system * mean_out) / r.weight)
            rep.waiting.append(obj)
            rep.outstanding += obj.target
            rep.in_system += 1
            if rep.busy:
                continue
        else:
            rep = obj
            done.clear()
            rep.end(now, done)
            for r, fin in done:
                ttft = (r.first - r.arrival) * 1e3
                tpot = 0.0 if r.out <= 1 else ((fin - r.arrival) * 1e3 - ttft) / (r.out - 1)
                ttfts.append(ttft)
                tpots.append(tpot)
                met += ttft <= a.ttft_ms and tpot <= a.tpot_ms
        end = rep.start(now)
        if end is not None:
            heapq.heappush(events, (end, seq, "step", rep))
            seq += 1
    wall = time.perf_counter() - started
    ttfts.sort()
    tpots.sort()
    p99 = lambda v: v[min(len(v) - 1, int(0.99 * len(v)))]
    print(json.dumps({
        "requests": len(rows), "replicas": len(replicas), "events": seq,
        "wall_s": round(wall, 2), "requests_per_s": round(len(rows) / wall),
        "attainment": met / len(rows), "ttft_p99_ms": p99(ttfts), "tpot_p99_ms": p99(tpots),
    }))


if __name__ == "__main__":
    main()
