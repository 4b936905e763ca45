-- Aggregate demand, format version 3 (docs/aggregate-format.md), from a table
-- or view named `requests` with the columns
--   ts             DOUBLE   arrival, seconds (UTC seconds since 1970-01-01 for
--                           wall-clock logs, seconds since the start otherwise)
--   tier           STRING   the tier (customer class, service) of the request
--   input_tokens   BIGINT   prompt tokens, 0 or more
--   output_tokens  BIGINT   generated tokens, 0 or more
-- It defines four views, one per table of the format; export each to
-- minutes / lengths / pairs / sample as CSV with a header, or as Parquet.
--
-- Portable on purpose: the same text runs on DuckDB and Spark SQL. It uses
-- only CREATE OR REPLACE TEMPORARY VIEW, WITH, SELECT ... GROUP BY, JOIN,
-- UNION ALL, CASE, CAST(... AS BIGINT), FLOOR, LN, POWER, MOD, MIN, MAX, SUM,
-- COUNT, COALESCE, ROW_NUMBER() and SUM() OVER (PARTITION BY ... ORDER BY ...), with
-- arithmetic on integers below 2^63 or exactly representable doubles, so
-- every engine computes the same integers (see the docs for why the bin
-- formula is exact). No engine-specific function is used.

CREATE OR REPLACE TEMPORARY VIEW aggregate_binned AS
SELECT
  tier,
  second_s,
  -- Microseconds from the minute's start: exact (see the docs).
  (second_s - 60 * CAST(FLOOR(second_s / 60) AS BIGINT)) * 1000000 + within_us AS offset_us,
  -- The arrival in whole microseconds, which the sample key hashes.
  second_s * 1000000 + within_us AS arrival_us,
  input_tokens,
  output_tokens,
  -- Fine bin: one per count below 4, four per power of two, 80 from 2^21 up.
  CASE WHEN input_tokens < 4 THEN input_tokens
       WHEN input_tokens >= 2097152 THEN 80
       ELSE 4 * (in_j - 1)
            + CAST(FLOOR((input_tokens - POWER(2, in_j)) / POWER(2, in_j - 2)) AS BIGINT)
  END AS input_bin,
  CASE WHEN output_tokens < 4 THEN output_tokens
       WHEN output_tokens >= 2097152 THEN 80
       ELSE 4 * (out_j - 1)
            + CAST(FLOOR((output_tokens - POWER(2, out_j)) / POWER(2, out_j - 2)) AS BIGINT)
  END AS output_bin
FROM (
  SELECT
    tier,
    CAST(FLOOR(ts) AS BIGINT) AS second_s,
    -- The fraction to the nearest microsecond, kept inside its second:
    -- ts - FLOOR(ts) is exact, the product one rounded multiplication, the
    -- sum exact (see the docs).
    CASE WHEN FLOOR((ts - FLOOR(ts)) * 1000000 + 0.5) > 999999 THEN 999999
         ELSE CAST(FLOOR((ts - FLOOR(ts)) * 1000000 + 0.5) AS BIGINT)
    END AS within_us,
    CAST(input_tokens AS BIGINT) AS input_tokens,
    CAST(output_tokens AS BIGINT) AS output_tokens,
    -- floor(log2(n)), exact: n + 0.5 is never a power of two.
    CAST(FLOOR(LN(input_tokens + 0.5) / LN(2)) AS BIGINT) AS in_j,
    CAST(FLOOR(LN(output_tokens + 0.5) / LN(2)) AS BIGINT) AS out_j
  FROM requests
) AS r;

CREATE OR REPLACE TEMPORARY VIEW aggregate_minutes AS
WITH per_second AS (
  SELECT
    tier,
    second_s,
    60 * CAST(FLOOR(second_s / 60) AS BIGINT) AS minute_s,
    COUNT(*) AS requests,
    SUM(input_tokens) AS input_tokens,
    SUM(output_tokens) AS output_tokens,
    MIN(offset_us) AS first_arrival_us,
    MAX(offset_us) AS last_arrival_us
  FROM aggregate_binned
  GROUP BY tier, second_s
),
per_minute AS (
  SELECT
    tier,
    minute_s,
    SUM(requests) AS requests,
    SUM(input_tokens) AS input_tokens,
    SUM(output_tokens) AS output_tokens,
    MAX(requests) AS busiest_second,
    SUM(requests * requests) AS second_sq_sum,
    MIN(first_arrival_us) AS first_arrival_us,
    MAX(last_arrival_us) AS last_arrival_us,
    -- Each clock second's arrivals (second_s - minute_s is 0..59).
    SUM(CASE WHEN second_s - minute_s = 0 THEN requests ELSE 0 END) AS second_00,
    SUM(CASE WHEN second_s - minute_s = 1 THEN requests ELSE 0 END) AS second_01,
    SUM(CASE WHEN second_s - minute_s = 2 THEN requests ELSE 0 END) AS second_02,
    SUM(CASE WHEN second_s - minute_s = 3 THEN requests ELSE 0 END) AS second_03,
    SUM(CASE WHEN second_s - minute_s = 4 THEN requests ELSE 0 END) AS second_04,
    SUM(CASE WHEN second_s - minute_s = 5 THEN requests ELSE 0 END) AS second_05,
    SUM(CASE WHEN second_s - minute_s = 6 THEN requests ELSE 0 END) AS second_06,
    SUM(CASE WHEN second_s - minute_s = 7 THEN requests ELSE 0 END) AS second_07,
    SUM(CASE WHEN second_s - minute_s = 8 THEN requests ELSE 0 END) AS second_08,
    SUM(CASE WHEN second_s - minute_s = 9 THEN requests ELSE 0 END) AS second_09,
    SUM(CASE WHEN second_s - minute_s = 10 THEN requests ELSE 0 END) AS second_10,
    SUM(CASE WHEN second_s - minute_s = 11 THEN requests ELSE 0 END) AS second_11,
    SUM(CASE WHEN second_s - minute_s = 12 THEN requests ELSE 0 END) AS second_12,
    SUM(CASE WHEN second_s - minute_s = 13 THEN requests ELSE 0 END) AS second_13,
    SUM(CASE WHEN second_s - minute_s = 14 THEN requests ELSE 0 END) AS second_14,
    SUM(CASE WHEN second_s - minute_s = 15 THEN requests ELSE 0 END) AS second_15,
    SUM(CASE WHEN second_s - minute_s = 16 THEN requests ELSE 0 END) AS second_16,
    SUM(CASE WHEN second_s - minute_s = 17 THEN requests ELSE 0 END) AS second_17,
    SUM(CASE WHEN second_s - minute_s = 18 THEN requests ELSE 0 END) AS second_18,
    SUM(CASE WHEN second_s - minute_s = 19 THEN requests ELSE 0 END) AS second_19,
    SUM(CASE WHEN second_s - minute_s = 20 THEN requests ELSE 0 END) AS second_20,
    SUM(CASE WHEN second_s - minute_s = 21 THEN requests ELSE 0 END) AS second_21,
    SUM(CASE WHEN second_s - minute_s = 22 THEN requests ELSE 0 END) AS second_22,
    SUM(CASE WHEN second_s - minute_s = 23 THEN requests ELSE 0 END) AS second_23,
    SUM(CASE WHEN second_s - minute_s = 24 THEN requests ELSE 0 END) AS second_24,
    SUM(CASE WHEN second_s - minute_s = 25 THEN requests ELSE 0 END) AS second_25,
    SUM(CASE WHEN second_s - minute_s = 26 THEN requests ELSE 0 END) AS second_26,
    SUM(CASE WHEN second_s - minute_s = 27 THEN requests ELSE 0 END) AS second_27,
    SUM(CASE WHEN second_s - minute_s = 28 THEN requests ELSE 0 END) AS second_28,
    SUM(CASE WHEN second_s - minute_s = 29 THEN requests ELSE 0 END) AS second_29,
    SUM(CASE WHEN second_s - minute_s = 30 THEN requests ELSE 0 END) AS second_30,
    SUM(CASE WHEN second_s - minute_s = 31 THEN requests ELSE 0 END) AS second_31,
    SUM(CASE WHEN second_s - minute_s = 32 THEN requests ELSE 0 END) AS second_32,
    SUM(CASE WHEN second_s - minute_s = 33 THEN requests ELSE 0 END) AS second_33,
    SUM(CASE WHEN second_s - minute_s = 34 THEN requests ELSE 0 END) AS second_34,
    SUM(CASE WHEN second_s - minute_s = 35 THEN requests ELSE 0 END) AS second_35,
    SUM(CASE WHEN second_s - minute_s = 36 THEN requests ELSE 0 END) AS second_36,
    SUM(CASE WHEN second_s - minute_s = 37 THEN requests ELSE 0 END) AS second_37,
    SUM(CASE WHEN second_s - minute_s = 38 THEN requests ELSE 0 END) AS second_38,
    SUM(CASE WHEN second_s - minute_s = 39 THEN requests ELSE 0 END) AS second_39,
    SUM(CASE WHEN second_s - minute_s = 40 THEN requests ELSE 0 END) AS second_40,
    SUM(CASE WHEN second_s - minute_s = 41 THEN requests ELSE 0 END) AS second_41,
    SUM(CASE WHEN second_s - minute_s = 42 THEN requests ELSE 0 END) AS second_42,
    SUM(CASE WHEN second_s - minute_s = 43 THEN requests ELSE 0 END) AS second_43,
    SUM(CASE WHEN second_s - minute_s = 44 THEN requests ELSE 0 END) AS second_44,
    SUM(CASE WHEN second_s - minute_s = 45 THEN requests ELSE 0 END) AS second_45,
    SUM(CASE WHEN second_s - minute_s = 46 THEN requests ELSE 0 END) AS second_46,
    SUM(CASE WHEN second_s - minute_s = 47 THEN requests ELSE 0 END) AS second_47,
    SUM(CASE WHEN second_s - minute_s = 48 THEN requests ELSE 0 END) AS second_48,
    SUM(CASE WHEN second_s - minute_s = 49 THEN requests ELSE 0 END) AS second_49,
    SUM(CASE WHEN second_s - minute_s = 50 THEN requests ELSE 0 END) AS second_50,
    SUM(CASE WHEN second_s - minute_s = 51 THEN requests ELSE 0 END) AS second_51,
    SUM(CASE WHEN second_s - minute_s = 52 THEN requests ELSE 0 END) AS second_52,
    SUM(CASE WHEN second_s - minute_s = 53 THEN requests ELSE 0 END) AS second_53,
    SUM(CASE WHEN second_s - minute_s = 54 THEN requests ELSE 0 END) AS second_54,
    SUM(CASE WHEN second_s - minute_s = 55 THEN requests ELSE 0 END) AS second_55,
    SUM(CASE WHEN second_s - minute_s = 56 THEN requests ELSE 0 END) AS second_56,
    SUM(CASE WHEN second_s - minute_s = 57 THEN requests ELSE 0 END) AS second_57,
    SUM(CASE WHEN second_s - minute_s = 58 THEN requests ELSE 0 END) AS second_58,
    SUM(CASE WHEN second_s - minute_s = 59 THEN requests ELSE 0 END) AS second_59
  FROM per_second
  GROUP BY tier, minute_s
),
spans AS (
  SELECT tier, MIN(minute_s) AS first_s, MAX(minute_s) AS last_s
  FROM per_minute
  GROUP BY tier
),
digits AS (
  SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
  UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
  UNION ALL SELECT 8 UNION ALL SELECT 9
),
-- 0 .. 999,999 minutes (694 days: more than the 400 a log may span).
offsets AS (
  SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d + 100000 * g.d AS k
  FROM digits a CROSS JOIN digits b CROSS JOIN digits c
       CROSS JOIN digits e CROSS JOIN digits f CROSS JOIN digits g
),
every_minute AS (
  SELECT s.tier, s.first_s + 60 * o.k AS minute_s
  FROM spans s JOIN offsets o ON 60 * o.k <= s.last_s - s.first_s
)
SELECT
  3 AS version,
  m.tier AS tier,
  m.minute_s AS minute_s,
  CAST(COALESCE(p.requests, 0) AS BIGINT) AS requests,
  CAST(COALESCE(p.input_tokens, 0) AS BIGINT) AS input_tokens,
  CAST(COALESCE(p.output_tokens, 0) AS BIGINT) AS output_tokens,
  CAST(COALESCE(p.busiest_second, 0) AS BIGINT) AS busiest_second,
  CAST(COALESCE(p.second_sq_sum, 0) AS BIGINT) AS second_sq_sum,
  CAST(COALESCE(p.first_arrival_us, 0) AS BIGINT) AS first_arrival_us,
  CAST(COALESCE(p.last_arrival_us, 0) AS BIGINT) AS last_arrival_us,
  CAST(COALESCE(p.second_00, 0) AS BIGINT) AS second_00,
  CAST(COALESCE(p.second_01, 0) AS BIGINT) AS second_01,
  CAST(COALESCE(p.second_02, 0) AS BIGINT) AS second_02,
  CAST(COALESCE(p.second_03, 0) AS BIGINT) AS second_03,
  CAST(COALESCE(p.second_04, 0) AS BIGINT) AS second_04,
  CAST(COALESCE(p.second_05, 0) AS BIGINT) AS second_05,
  CAST(COALESCE(p.second_06, 0) AS BIGINT) AS second_06,
  CAST(COALESCE(p.second_07, 0) AS BIGINT) AS second_07,
  CAST(COALESCE(p.second_08, 0) AS BIGINT) AS second_08,
  CAST(COALESCE(p.second_09, 0) AS BIGINT) AS second_09,
  CAST(COALESCE(p.second_10, 0) AS BIGINT) AS second_10,
  CAST(COALESCE(p.second_11, 0) AS BIGINT) AS second_11,
  CAST(COALESCE(p.second_12, 0) AS BIGINT) AS second_12,
  CAST(COALESCE(p.second_13, 0) AS BIGINT) AS second_13,
  CAST(COALESCE(p.second_14, 0) AS BIGINT) AS second_14,
  CAST(COALESCE(p.second_15, 0) AS BIGINT) AS second_15,
  CAST(COALESCE(p.second_16, 0) AS BIGINT) AS second_16,
  CAST(COALESCE(p.second_17, 0) AS BIGINT) AS second_17,
  CAST(COALESCE(p.second_18, 0) AS BIGINT) AS second_18,
  CAST(COALESCE(p.second_19, 0) AS BIGINT) AS second_19,
  CAST(COALESCE(p.second_20, 0) AS BIGINT) AS second_20,
  CAST(COALESCE(p.second_21, 0) AS BIGINT) AS second_21,
  CAST(COALESCE(p.second_22, 0) AS BIGINT) AS second_22,
  CAST(COALESCE(p.second_23, 0) AS BIGINT) AS second_23,
  CAST(COALESCE(p.second_24, 0) AS BIGINT) AS second_24,
  CAST(COALESCE(p.second_25, 0) AS BIGINT) AS second_25,
  CAST(COALESCE(p.second_26, 0) AS BIGINT) AS second_26,
  CAST(COALESCE(p.second_27, 0) AS BIGINT) AS second_27,
  CAST(COALESCE(p.second_28, 0) AS BIGINT) AS second_28,
  CAST(COALESCE(p.second_29, 0) AS BIGINT) AS second_29,
  CAST(COALESCE(p.second_30, 0) AS BIGINT) AS second_30,
  CAST(COALESCE(p.second_31, 0) AS BIGINT) AS second_31,
  CAST(COALESCE(p.second_32, 0) AS BIGINT) AS second_32,
  CAST(COALESCE(p.second_33, 0) AS BIGINT) AS second_33,
  CAST(COALESCE(p.second_34, 0) AS BIGINT) AS second_34,
  CAST(COALESCE(p.second_35, 0) AS BIGINT) AS second_35,
  CAST(COALESCE(p.second_36, 0) AS BIGINT) AS second_36,
  CAST(COALESCE(p.second_37, 0) AS BIGINT) AS second_37,
  CAST(COALESCE(p.second_38, 0) AS BIGINT) AS second_38,
  CAST(COALESCE(p.second_39, 0) AS BIGINT) AS second_39,
  CAST(COALESCE(p.second_40, 0) AS BIGINT) AS second_40,
  CAST(COALESCE(p.second_41, 0) AS BIGINT) AS second_41,
  CAST(COALESCE(p.second_42, 0) AS BIGINT) AS second_42,
  CAST(COALESCE(p.second_43, 0) AS BIGINT) AS second_43,
  CAST(COALESCE(p.second_44, 0) AS BIGINT) AS second_44,
  CAST(COALESCE(p.second_45, 0) AS BIGINT) AS second_45,
  CAST(COALESCE(p.second_46, 0) AS BIGINT) AS second_46,
  CAST(COALESCE(p.second_47, 0) AS BIGINT) AS second_47,
  CAST(COALESCE(p.second_48, 0) AS BIGINT) AS second_48,
  CAST(COALESCE(p.second_49, 0) AS BIGINT) AS second_49,
  CAST(COALESCE(p.second_50, 0) AS BIGINT) AS second_50,
  CAST(COALESCE(p.second_51, 0) AS BIGINT) AS second_51,
  CAST(COALESCE(p.second_52, 0) AS BIGINT) AS second_52,
  CAST(COALESCE(p.second_53, 0) AS BIGINT) AS second_53,
  CAST(COALESCE(p.second_54, 0) AS BIGINT) AS second_54,
  CAST(COALESCE(p.second_55, 0) AS BIGINT) AS second_55,
  CAST(COALESCE(p.second_56, 0) AS BIGINT) AS second_56,
  CAST(COALESCE(p.second_57, 0) AS BIGINT) AS second_57,
  CAST(COALESCE(p.second_58, 0) AS BIGINT) AS second_58,
  CAST(COALESCE(p.second_59, 0) AS BIGINT) AS second_59
FROM every_minute m
LEFT JOIN per_minute p ON p.tier = m.tier AND p.minute_s = m.minute_s
ORDER BY tier, minute_s;

CREATE OR REPLACE TEMPORARY VIEW aggregate_lengths AS
SELECT 3 AS version, tier, axis, bin, requests, tokens
FROM (
  SELECT tier, 'input' AS axis, input_bin AS bin,
         CAST(COUNT(*) AS BIGINT) AS requests, CAST(SUM(input_tokens) AS BIGINT) AS tokens
  FROM aggregate_binned
  GROUP BY tier, input_bin
  UNION ALL
  SELECT tier, 'output' AS axis, output_bin AS bin,
         CAST(COUNT(*) AS BIGINT) AS requests, CAST(SUM(output_tokens) AS BIGINT) AS tokens
  FROM aggregate_binned
  GROUP BY tier, output_bin
) AS h
ORDER BY tier, axis, bin;

CREATE OR REPLACE TEMPORARY VIEW aggregate_pairs AS
SELECT 3 AS version, tier, input_bin, output_bin,
       CAST(COUNT(*) AS BIGINT) AS requests,
       CAST(SUM(input_tokens) AS BIGINT) AS input_tokens,
       CAST(SUM(output_tokens) AS BIGINT) AS output_tokens
FROM aggregate_binned
GROUP BY tier, input_bin, output_bin
ORDER BY tier, input_bin, output_bin;

-- The length sample: per tier, the 16384 requests of smallest sample key, a
-- hash of the arrival microsecond and the lengths modulo the prime
-- 2^31 - 1 (src/traces/length_sample.rs). Every operand is below 2^31, so
-- every product is below 2^62: exact BIGINT arithmetic on every engine.
-- Each tier's requests that can be among its 16384 of smallest sample key,
-- ranked (sql/prefixes.sql finds the sampled requests here too).
CREATE OR REPLACE TEMPORARY VIEW aggregate_ranked AS
WITH step_a AS (
  SELECT tier, arrival_us, input_tokens, output_tokens,
         MOD(MOD(arrival_us, 2147483647) + 2147483647, 2147483647) AS a
  FROM aggregate_binned
),
step_b AS (
  SELECT tier, arrival_us, input_tokens, output_tokens,
         MOD(a * 1103515245 + MOD(input_tokens, 2147483647), 2147483647) AS b
  FROM step_a
),
step_c AS (
  SELECT tier, arrival_us, input_tokens, output_tokens, b,
         MOD(b * 1664525 + MOD(output_tokens, 2147483647), 2147483647) AS c
  FROM step_b
),
keyed AS (
  SELECT tier, arrival_us, input_tokens, output_tokens,
         MOD(MOD(c * MOD(c + 1013904223, 2147483647), 2147483647) * 48271 + b,
             2147483647) AS sample_key
  FROM step_c
),
-- Only the rows that can be among a tier's 16384 smallest keys are ranked:
-- keys in buckets of 2^20 (2048 buckets), and each tier's buckets up to the
-- first whose running count reaches 16384 (all of them when the tier has
-- fewer rows). Those hold the tier's 16384 smallest keys, so the ranks are
-- those of all its rows, and the window sorts tens of thousands of rows a
-- tier instead of every row (in one task per tier on Spark).
bucketed AS (
  SELECT tier, arrival_us, input_tokens, output_tokens, sample_key,
         CAST(FLOOR(sample_key / 1048576) AS BIGINT) AS bucket
  FROM keyed
),
bucket_counts AS (
  SELECT tier, bucket, COUNT(*) AS requests
  FROM bucketed
  GROUP BY tier, bucket
),
running AS (
  SELECT tier, bucket,
         SUM(requests) OVER (PARTITION BY tier ORDER BY bucket
                             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS up_to
  FROM bucket_counts
),
cutoff AS (
  SELECT tier,
         COALESCE(MIN(CASE WHEN up_to >= 16384 THEN bucket END), MAX(bucket)) AS bucket
  FROM running
  GROUP BY tier
),
ranked AS (
  SELECT k.tier AS tier, k.sample_key AS sample_key, k.arrival_us AS arrival_us,
         k.input_tokens AS input_tokens, k.output_tokens AS output_tokens,
         ROW_NUMBER() OVER (PARTITION BY k.tier
                            ORDER BY k.sample_key, k.arrival_us, k.input_tokens, k.output_tokens)
           AS sample_rank
  FROM bucketed k
  JOIN cutoff c ON c.tier = k.tier
  WHERE k.bucket <= c.bucket
)
SELECT tier, sample_rank, sample_key, arrival_us, input_tokens, output_tokens
FROM ranked
WHERE sample_rank <= 16384;

CREATE OR REPLACE TEMPORARY VIEW aggregate_sample AS
SELECT 3 AS version, tier, CAST(sample_rank AS BIGINT) AS sample_rank,
       CAST(sample_key AS BIGINT) AS sample_key, input_tokens, output_tokens
FROM aggregate_ranked
ORDER BY tier, sample_rank;
