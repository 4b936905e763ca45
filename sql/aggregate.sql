-- Aggregate demand, format version 2 (docs/aggregate-format.md), from a table
-- or view named `requests` with the columns
--   ts             DOUBLE   arrival, seconds (UTC seconds since 1970-01-01 for
--                           wall-clock logs, seconds since the start otherwise)
--   tier           STRING   the tier (customer class, service) of the request
--   input_tokens   BIGINT   prompt tokens, 0 or more
--   output_tokens  BIGINT   generated tokens, 0 or more
-- It defines three views, one per table of the format; export each to
-- minutes / lengths / pairs as CSV with a header, or as Parquet.
--
-- Portable on purpose: the same text runs on DuckDB and Spark SQL. It uses
-- only CREATE OR REPLACE TEMPORARY VIEW, WITH, SELECT ... GROUP BY, JOIN,
-- UNION ALL, CASE, CAST(... AS BIGINT), FLOOR, LN, POWER, MIN, MAX, SUM,
-- COUNT and COALESCE, with arithmetic on integers or exactly representable
-- doubles, so every engine computes the same integers (see the docs for why
-- the bin formula is exact). No engine-specific function is used.

CREATE OR REPLACE TEMPORARY VIEW aggregate_binned AS
SELECT
  tier,
  second_s,
  -- Microseconds from the minute's start: exact (see the docs).
  (second_s - 60 * CAST(FLOOR(second_s / 60) AS BIGINT)) * 1000000 + within_us AS offset_us,
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
    MAX(last_arrival_us) AS last_arrival_us
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
  2 AS version,
  m.tier AS tier,
  m.minute_s AS minute_s,
  CAST(COALESCE(p.requests, 0) AS BIGINT) AS requests,
  CAST(COALESCE(p.input_tokens, 0) AS BIGINT) AS input_tokens,
  CAST(COALESCE(p.output_tokens, 0) AS BIGINT) AS output_tokens,
  CAST(COALESCE(p.busiest_second, 0) AS BIGINT) AS busiest_second,
  CAST(COALESCE(p.second_sq_sum, 0) AS BIGINT) AS second_sq_sum,
  CAST(COALESCE(p.first_arrival_us, 0) AS BIGINT) AS first_arrival_us,
  CAST(COALESCE(p.last_arrival_us, 0) AS BIGINT) AS last_arrival_us
FROM every_minute m
LEFT JOIN per_minute p ON p.tier = m.tier AND p.minute_s = m.minute_s
ORDER BY tier, minute_s;

CREATE OR REPLACE TEMPORARY VIEW aggregate_lengths AS
SELECT 2 AS version, tier, axis, bin, requests, tokens
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
SELECT 2 AS version, tier, input_bin, output_bin, CAST(COUNT(*) AS BIGINT) AS requests
FROM (
  -- Coarse bin of a fine bin: 0-2 stay, 3 joins 2, b >= 4 goes to floor(b/4) + 2.
  SELECT
    tier,
    CASE WHEN input_bin < 3 THEN input_bin WHEN input_bin = 3 THEN 2
         ELSE CAST(FLOOR(input_bin / 4) AS BIGINT) + 2 END AS input_bin,
    CASE WHEN output_bin < 3 THEN output_bin WHEN output_bin = 3 THEN 2
         ELSE CAST(FLOOR(output_bin / 4) AS BIGINT) + 2 END AS output_bin
  FROM aggregate_binned
) AS c
GROUP BY tier, input_bin, output_bin
ORDER BY tier, input_bin, output_bin;
