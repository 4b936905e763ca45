#!/usr/bin/env python3
"""sql/aggregate.sql on DuckDB over an Azure-format trace (the peer of
`planner trace aggregate` in docs/benchmarks.md).

    python3 benches/aggregate_duckdb.py TRACE.csv OUT_DIR
"""
import os
import sys

import duckdb

trace, out = sys.argv[1], sys.argv[2]
sql = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sql", "aggregate.sql")).read()
os.makedirs(out, exist_ok=True)
con = duckdb.connect()
con.execute(
    "CREATE VIEW requests AS SELECT epoch(TIMESTAMP::TIMESTAMPTZ) AS ts, 'week' AS tier, "
    "ContextTokens AS input_tokens, GeneratedTokens AS output_tokens "
    "FROM read_csv('" + trace.replace("'", "''") + "', header = true, "
    "columns = {'TIMESTAMP': 'VARCHAR', 'ContextTokens': 'BIGINT', 'GeneratedTokens': 'BIGINT'})"
)
con.execute(sql)
for name in ("minutes", "lengths", "pairs", "sample"):
    con.execute(f"COPY (SELECT * FROM aggregate_{name}) TO '{out}/{name}.csv' (FORMAT CSV, HEADER)")
