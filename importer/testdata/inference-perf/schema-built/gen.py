# Builds this directory's inference-perf results from the schema in
# kubernetes-sigs/inference-perf (inference_perf/apis/base.py RequestLifecycleMetric
# and InferenceInfo; inference_perf/reportgen/base.py summarize_requests and the
# per_request_lifecycle_metrics dump). No real per-request file was found in a
# public repository, so the numbers are invented; the stage summaries are computed
# here with inference-perf's own definitions. Run: python3 gen.py
import json, random

random.seed(23)

def pct(xs, p):  # numpy.percentile, linear interpolation
    xs = sorted(xs)
    k = (len(xs) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)

def summarize(xs):
    if not xs:
        return None
    d = {"mean": sum(xs) / len(xs), "min": min(xs), "max": max(xs)}
    for p in (10, 50, 90):
        d["median" if p == 50 else "p%d" % p] = pct(xs, p)
    return d

records, stages = [], []
t = 1393.251  # time.perf_counter() seconds
for stage, (rate, n) in enumerate([(2.0, 6), (4.0, 8)]):
    recs = []
    for i in range(n):
        start = round(t + i / rate, 6)
        ttft = round(random.uniform(0.05, 0.2), 6)
        out = random.randint(4, 9)
        tokens, tt = [], start + ttft
        chunk = 0
        while len(tokens) < out:  # chunks of one or two tokens share a time
            k = min(1 + (chunk % 2), out - len(tokens))
            tokens += [round(tt, 6)] * k
            tt += random.uniform(0.01, 0.03)
            chunk += 1
        end = round(tokens[-1] + 0.002, 6)
        prompt = random.randint(20, 60)
        rec = {
            "start_time": start, "end_time": end,
            "request": json.dumps({"model": "meta-llama/Llama-3.1-8B-Instruct", "prompt": "...", "max_tokens": out, "stream": True}),
            "response": "...",
            "info": {"request_metrics": {"text": {"input_tokens": prompt}}, "response_metrics": {
                "output_tokens": out, "server_usage": {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out},
                "response_chunks": [], "chunk_times": [], "output_token_times": tokens},
                "extra_info": {}, "lora_adapter": None, "input_tokens": prompt},
            "error": None,
        }
        if stage == 1 and i == 5:
            rec["info"]["response_metrics"] = None
            rec["end_time"] = round(start + 0.004, 6)
            rec["error"] = {"error_type": "HTTP Error 503", "error_msg": "{\"error\": {\"message\": \"Service Unavailable\"}}"}
        recs.append(rec)
    t = max(r["end_time"] for r in recs) + 1.0
    ok = [r for r in recs if r["error"] is None]
    total = max(r["end_time"] for r in recs) - min(r["start_time"] for r in recs)
    sends = [r["start_time"] for r in recs]
    ttft = [r["info"]["response_metrics"]["output_token_times"][0] - r["start_time"] for r in ok]
    lat = [r["end_time"] - r["start_time"] for r in ok]
    tpot, itl = [], []
    for r in ok:
        ts = r["info"]["response_metrics"]["output_token_times"]
        n_out = r["info"]["response_metrics"]["output_tokens"]
        tpot.append((ts[-1] - ts[0]) / (n_out - 1))
        itl += [b - a for a, b in zip(ts, ts[1:])]
    outs = sum(r["info"]["response_metrics"]["output_tokens"] for r in ok)
    stages.append({
        "load_summary": {"count": len(recs), "schedule_delay": None, "send_duration": max(sends) - min(sends),
                         "requested_rate": rate, "achieved_rate": len(recs) / (max(sends) - min(sends))},
        "successes": {"count": len(ok), "latency": {
            "request_latency": summarize(lat), "time_per_output_token": summarize(tpot),
            "time_to_first_token": summarize(ttft), "inter_token_latency": summarize(itl)},
            "throughput": {"output_tokens_per_sec": outs / total, "requests_per_sec": len(ok) / total}},
        "failures": {"count": len(recs) - len(ok)},
    })
    records += recs

with open("per_request_lifecycle_metrics.json", "w") as f:
    json.dump(records, f, indent=2)
for i, s in enumerate(stages):
    with open("stage_%d_lifecycle_metrics.json" % i, "w") as f:
        json.dump(s, f)
