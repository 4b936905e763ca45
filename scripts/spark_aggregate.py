#!/usr/bin/env python3
"""Runs sql/aggregate.sql on Spark SQL (PySpark, local mode) over a CSV of
requests and writes the aggregate tables as CSV (docs/aggregate-format.md).

    python3 scripts/spark_aggregate.py REQUESTS.csv OUT_DIR

REQUESTS.csv has the header `ts,tier,input_tokens,output_tokens`, as for
scripts/duckdb_aggregate.py. The SQL file's statements run one by one,
unchanged; each view is written as one CSV file with a header.
"""
import glob
import os
import re
import shutil
import sys

from pyspark.sql import SparkSession


def statements(sql):
    """The file's statements, without its comment lines."""
    text = "\n".join(l for l in sql.splitlines() if not l.lstrip().startswith("--"))
    return [s.strip() for s in re.split(r";\s*(?:\n|$)", text) if s.strip()]


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    requests, out_dir = argv[1], os.path.abspath(argv[2])
    sql_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sql", "aggregate.sql")
    with open(sql_path, encoding="utf-8") as f:
        sql = f.read()
    spark = (SparkSession.builder.master("local[2]").appName("aggregate")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    (spark.read.option("header", True)
        .schema("ts DOUBLE, tier STRING, input_tokens BIGINT, output_tokens BIGINT")
        .csv(requests).createOrReplaceTempView("requests"))
    for statement in statements(sql):
        spark.sql(statement)
    os.makedirs(out_dir, exist_ok=True)
    for name in ("minutes", "lengths", "pairs", "sample"):
        parts = os.path.join(out_dir, f"{name}.parts")
        (spark.table(f"aggregate_{name}").coalesce(1)
            .write.mode("overwrite").option("header", True).csv(parts))
        (part,) = glob.glob(os.path.join(parts, "part-*.csv"))
        shutil.move(part, os.path.join(out_dir, f"{name}.csv"))
        shutil.rmtree(parts)
    spark.stop()


if __name__ == "__main__":
    main(sys.argv)
