#!/usr/bin/env python3
"""Runs sql/aggregate.sql on DuckDB over a CSV of requests and writes the
aggregate tables (docs/aggregate-format.md).

    python3 scripts/duckdb_aggregate.py REQUESTS.csv OUT_DIR [--parquet]

REQUESTS.csv has the header `ts,tier,input_tokens,output_tokens` (ts in
seconds as a decimal number). The same SQL runs unchanged on Spark SQL; see
docs/aggregate-format.md for Spark and BigQuery.
"""
import os
import sys

import duckdb


def main(argv):
    if len(argv) not in (3, 4) or (len(argv) == 4 and argv[3] != "--parquet"):
        sys.exit(__doc__)
    requests, out_dir = argv[1], argv[2]
    parquet = len(argv) == 4
    sql_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sql", "aggregate.sql")
    with open(sql_path, encoding="utf-8") as f:
        sql = f.read()
    os.makedirs(out_dir, exist_ok=True)
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE requests AS SELECT * FROM read_csv(?, header = true, columns = "
        "{'ts': 'DOUBLE', 'tier': 'VARCHAR', 'input_tokens': 'BIGINT', 'output_tokens': 'BIGINT'})",
        [requests],
    )
    con.execute(sql)
    for name in ("minutes", "lengths", "pairs", "sample"):
        if parquet:
            target = os.path.join(out_dir, f"{name}.parquet")
            options = "FORMAT PARQUET"
        else:
            target = os.path.join(out_dir, f"{name}.csv")
            options = "FORMAT CSV, HEADER"
        con.execute(f"COPY (SELECT * FROM aggregate_{name}) TO '{target}' ({options})")


if __name__ == "__main__":
    main(sys.argv)
