#!/usr/bin/env python3
"""Runs sql/aggregate.sql on DuckDB over a CSV of requests and writes the
aggregate tables (docs/aggregate-format.md); with --blocks, also
sql/prefixes.sql and its `prefixes` table.

    python3 scripts/duckdb_aggregate.py REQUESTS.csv OUT_DIR [--parquet] [--blocks BLOCKS.csv]

REQUESTS.csv has the columns `ts,tier,input_tokens,output_tokens` (ts in
seconds as a decimal number: a Mooncake trace's `timestamp` / 1000), and
with --blocks a fifth column `request_seq` (the request's place in the log,
unique within a tier); BLOCKS.csv has the columns
`tier,request_seq,block_index,hash_id,block_tokens` (one row per prompt
block; `request_seq` as in REQUESTS.csv). Columns are found by their header
names, in any order. The same SQL runs
unchanged on Spark SQL; see docs/aggregate-format.md for Spark and BigQuery.
"""
import os
import sys

import duckdb


def main(argv):
    args = argv[1:]
    parquet = "--parquet" in args
    if parquet:
        args.remove("--parquet")
    blocks = None
    if "--blocks" in args:
        at = args.index("--blocks")
        if at + 1 >= len(args):
            sys.exit(__doc__)
        blocks = args[at + 1]
        del args[at : at + 2]
    if len(args) != 2:
        sys.exit(__doc__)
    requests, out_dir = args
    sql_dir = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sql")
    os.makedirs(out_dir, exist_ok=True)
    con = duckdb.connect()
    # Columns are taken by their header names, in any order, each cast from
    # its text (a missing one fails with DuckDB's message naming it).
    def table(name, path, columns):
        casts = ", ".join(f"CAST({c} AS {t}) AS {c}" for c, t in columns)
        con.execute(
            f"CREATE TABLE {name} AS SELECT {casts} FROM read_csv(?, header = true, all_varchar = true)",
            [path],
        )

    columns = [("ts", "DOUBLE"), ("tier", "VARCHAR"), ("input_tokens", "BIGINT"), ("output_tokens", "BIGINT")]
    if blocks is not None:
        columns.append(("request_seq", "BIGINT"))
    table("requests", requests, columns)
    names = ["minutes", "lengths", "pairs", "sample"]
    scripts = ["aggregate.sql"]
    if blocks is not None:
        table(
            "request_blocks",
            blocks,
            [("tier", "VARCHAR"), ("request_seq", "BIGINT"), ("block_index", "BIGINT"),
             ("hash_id", "BIGINT"), ("block_tokens", "BIGINT")],
        )
        names.append("prefixes")
        scripts.append("prefixes.sql")
    for script in scripts:
        with open(os.path.join(sql_dir, script), encoding="utf-8") as f:
            con.execute(f.read())
    for name in names:
        if parquet:
            target = os.path.join(out_dir, f"{name}.parquet")
            options = "FORMAT PARQUET"
        else:
            target = os.path.join(out_dir, f"{name}.csv")
            options = "FORMAT CSV, HEADER"
        con.execute(f"COPY (SELECT * FROM aggregate_{name}) TO '{target}' ({options})")


if __name__ == "__main__":
    main(sys.argv)
