"""Which requests of a Mooncake trace continue an earlier turn, by the rule of
src/traces/turns.rs, written again without the planner: the figures that
docs/simulator.md and src/traces/turns.rs quote for the conversation trace
(how many requests continue one, the new message's length and the gap
between the turns, the blocks a turn's output fills) and the unbounded
cache's share with those blocks.

Usage: python3 benches/next_turns.py TRACE.jsonl [MIN_WHOLE_BLOCKS]
(MIN_WHOLE_BLOCKS: 2, as the planner; 1 shows why not 1.)
"""
import json
import sys

BLOCK = 512


def main(path: str, min_blocks: int) -> None:
    rows = [json.loads(line) for line in open(path, encoding="utf-8")]
    by_last_block = {}  # a request's last whole block -> the latest such request
    named = set()
    generated = {}
    seen = set()
    continuations, new_tokens, gaps_ms = 0, [], []
    for i, r in enumerate(rows):
        chain, n = r["hash_ids"], r["input_length"]
        earlier = None
        for j in range(len(chain) - 1, min_blocks - 2, -1):
            a = by_last_block.get(chain[j])
            if a is not None and rows[a]["input_length"] // BLOCK == j + 1:
                earlier = a
                break
        whole = n // BLOCK
        if min_blocks <= whole <= len(chain):
            by_last_block[chain[whole - 1]] = i
        if earlier is not None:
            a = rows[earlier]
            conversation = a["input_length"] + a["output_length"]
            if n >= conversation:
                continuations += 1
                new_tokens.append(n - conversation)
                gaps_ms.append(r["timestamp"] - a["timestamp"])
                if earlier not in named:
                    start = a["input_length"] // BLOCK
                    end = min(conversation // BLOCK, len(chain))
                    blocks = [h for h in chain[min(start, end):end] if h not in seen]
                    if blocks:
                        named.add(earlier)
                        generated[earlier] = blocks
        seen.update(chain)
    cached, hit, prompt = set(), 0, 0
    for i, r in enumerate(rows):
        run = 0
        for h in r["hash_ids"]:
            if h not in cached:
                break
            run += 1
        hit += min(run * BLOCK, r["input_length"])
        prompt += r["input_length"]
        cached.update(r["hash_ids"])
        cached.update(generated.get(i, []))
    new_tokens.sort()
    gaps_ms.sort()

    def at(v, q):
        return v[int(q * (len(v) - 1))] if v else None

    print(json.dumps({
        "requests": len(rows),
        "continuations": continuations,
        "new_message_tokens_p10_p50_p90": [at(new_tokens, q) for q in (0.1, 0.5, 0.9)],
        "gap_s_p10_p50_p90": [at(gaps_ms, q) / 1000 for q in (0.1, 0.5, 0.9)] if gaps_ms else None,
        "turns_whose_output_is_named": len(generated),
        "generated_blocks": sum(len(b) for b in generated.values()),
        "unbounded_token_hit_share": hit / prompt,
    }, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2)
