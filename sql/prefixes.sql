-- Aggregate demand, format version 3: the optional `prefixes` table
-- (docs/aggregate-format.md), for a log that names its prompts' blocks. Run
-- after sql/aggregate.sql, whose views it reads, with two more inputs:
--   requests        as for sql/aggregate.sql, plus
--     request_seq   BIGINT   the request's place in the log (the order its
--                            prompts reached the cache): unique within a
--                            tier, any base, e.g. the line number
--   request_blocks  one row per prompt block of a request:
--     tier          STRING   the request's tier
--     request_seq   BIGINT   the request (the same numbers as `requests`)
--     block_index   BIGINT   the block's place in the prompt, 0, 1, 2, …
--     hash_id       BIGINT   the block's hash (Mooncake's `hash_ids`: equal
--                            hashes, equal prefixes up to that block)
--     block_tokens  BIGINT   tokens a hash covers (Mooncake: 512)
-- It defines the view `aggregate_prefixes`; export it as `prefixes` (CSV
-- with a header, or Parquet) beside the other four tables.
--
-- What it computes, per tier: the tier's requests run in `request_seq` order
-- through one LRU cache of blocks, each request looked up before its own
-- blocks are used, and the blocks it generated for its conversation's next
-- turn used right after its prompt's (below). A block's *stack distance* is
-- the number of distinct hashes used after its hash's last use and before
-- its request (none when the hash was never used: such a block is never
-- cached); a cache of C blocks finds a request's leading blocks while the
-- running maximum of their distances stays below C. Each sampled request
-- gets one row per distinct running maximum: the distance, and how many
-- leading blocks it covers.
--
-- A conversation's next turn (as `planner`'s src/traces/turns.rs finds it):
-- a request x continues the request a whose last whole prompt block (a has
-- at least two whole blocks, FLOOR(input_tokens / block_tokens)) is the
-- block of x at the same place, the latest such a for that block, and the
-- one with the most whole blocks among x's blocks; when x's prompt is at
-- least a's prompt and output, a generated x's blocks from a's whole blocks
-- up to FLOOR((a's input + output) / block_tokens), those whose hash no
-- earlier prompt named. The first such x of each a names a's blocks.
--
-- The distinct count is a dominance count: with t the last use of the
-- block's hash and s its request's first block (clocks count block uses
-- 0, 1, 2, … in order), the hashes used in (t, s) are the uses u in that
-- window whose own previous use p(u) is at or before t, so
--   distance = #{u : u < s, p(u) <= t} - (t + 1)
-- (every use up to t has p(u) < u <= t). The prefix u < s splits into the
-- dyadic blocks of clocks the binary digits of s give; in each, a running
-- count over (p, queries after uses) gives #{p(u) <= t}. About
-- (uses + lookups) x log2(uses) rows, sorted once per level and block.
--
-- Portable as sql/aggregate.sql is: CREATE OR REPLACE TEMPORARY VIEW, WITH,
-- SELECT ... GROUP BY, JOIN, LEFT JOIN, UNION ALL, CASE, COALESCE, CAST(...
-- AS BIGINT), FLOOR, POWER, MOD, MIN, MAX, SUM, COUNT, VALUES, ROW_NUMBER(),
-- LAG() and MIN()/MAX()/SUM() OVER (PARTITION BY ... ORDER BY ...).

-- Each request's last whole prompt block, when it has at least two.
CREATE OR REPLACE TEMPORARY VIEW turn_ends AS
SELECT b.tier AS tier, b.request_seq AS request_seq, b.hash_id AS hash_id,
       b.block_index AS block_index, b.block_tokens AS block_tokens,
       r.input_tokens + r.output_tokens AS conversation_tokens
FROM request_blocks b
JOIN requests r ON r.tier = b.tier AND r.request_seq = b.request_seq
WHERE b.block_index >= 1
  AND b.block_index + 1 = CAST(FLOOR(r.input_tokens / b.block_tokens) AS BIGINT);

-- The blocks each turn generated that its next turn names.
CREATE OR REPLACE TEMPORARY VIEW turn_generated AS
WITH marks AS (
  -- Every prompt block (a lookup) and every last whole block (an end), by
  -- hash; at one request, its lookups come before its end.
  SELECT tier, hash_id, request_seq, block_index, 0 AS kind, -1 AS end_seq
  FROM request_blocks
  UNION ALL
  SELECT tier, hash_id, request_seq, block_index, 1 AS kind, request_seq AS end_seq
  FROM turn_ends
),
latest AS (
  -- For each prompt block, the latest earlier request whose last whole
  -- block it is (-1: none).
  SELECT tier, request_seq, block_index, earlier_seq
  FROM (
    SELECT tier, request_seq, block_index, kind,
           MAX(end_seq) OVER (PARTITION BY tier, hash_id ORDER BY request_seq, kind
                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS earlier_seq
    FROM marks
  ) AS w
  WHERE kind = 0
),
candidates AS (
  -- Of those that end at the same place, the one with the most blocks.
  SELECT l.tier AS tier, l.request_seq AS request_seq, e.request_seq AS earlier_seq,
         e.block_index + 1 AS whole_blocks, e.block_tokens AS block_tokens,
         e.conversation_tokens AS conversation_tokens,
         ROW_NUMBER() OVER (PARTITION BY l.tier, l.request_seq ORDER BY l.block_index DESC) AS rank
  FROM latest l
  JOIN turn_ends e ON e.tier = l.tier AND e.request_seq = l.earlier_seq
  WHERE e.block_index = l.block_index
),
first_named AS (
  -- Each hash's first prompt.
  SELECT tier, hash_id, MIN(request_seq) AS first_seq
  FROM request_blocks
  GROUP BY tier, hash_id
),
named AS (
  SELECT c.tier AS tier, c.earlier_seq AS earlier_seq, c.request_seq AS request_seq,
         b.block_index AS block_index, b.hash_id AS hash_id
  FROM candidates c
  JOIN requests r ON r.tier = c.tier AND r.request_seq = c.request_seq
  JOIN request_blocks b ON b.tier = c.tier AND b.request_seq = c.request_seq
  JOIN first_named f ON f.tier = b.tier AND f.hash_id = b.hash_id
  WHERE c.rank = 1
    AND r.input_tokens >= c.conversation_tokens
    AND b.block_index >= c.whole_blocks
    AND b.block_index < CAST(FLOOR(c.conversation_tokens / c.block_tokens) AS BIGINT)
    AND f.first_seq = c.request_seq
),
firsts AS (
  SELECT tier, earlier_seq, MIN(request_seq) AS request_seq
  FROM named
  GROUP BY tier, earlier_seq
)
SELECT n.tier AS tier, n.earlier_seq AS request_seq, n.block_index AS block_index,
       n.hash_id AS hash_id
FROM named n
JOIN firsts f
  ON f.tier = n.tier AND f.earlier_seq = n.earlier_seq AND f.request_seq = n.request_seq;

-- Every block use in order: a request's prompt blocks (kind 0), then the
-- blocks it generated (kind 1); `position` numbers the prompt's.
CREATE OR REPLACE TEMPORARY VIEW prefix_uses AS
SELECT tier, request_seq, hash_id, kind, position, clock,
       COALESCE(LAG(clock) OVER (PARTITION BY tier, hash_id ORDER BY clock), -1) AS previous_use
FROM (
  SELECT tier, request_seq, hash_id, kind,
         ROW_NUMBER() OVER (PARTITION BY tier, request_seq, kind ORDER BY block_index) AS position,
         ROW_NUMBER() OVER (PARTITION BY tier ORDER BY request_seq, kind, block_index) - 1 AS clock
  FROM (
    SELECT tier, request_seq, hash_id, block_index, 0 AS kind FROM request_blocks
    UNION ALL
    SELECT tier, request_seq, hash_id, block_index, 1 AS kind FROM turn_generated
  ) AS all_uses
) AS u;

-- Each block's lookup: its hash's last use before the request (-1: none),
-- and the clock of the request's first block.
CREATE OR REPLACE TEMPORARY VIEW prefix_lookups AS
SELECT tier, request_seq, position,
       MIN(previous_use) OVER (PARTITION BY tier, request_seq, hash_id) AS last_use,
       MIN(clock) OVER (PARTITION BY tier, request_seq) AS request_start
FROM prefix_uses
WHERE kind = 0;

CREATE OR REPLACE TEMPORARY VIEW prefix_distances AS
WITH levels AS (
  SELECT level, CAST(POWER(2, level) AS BIGINT) AS width
  FROM (VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12),
               (13), (14), (15), (16), (17), (18), (19), (20), (21), (22), (23), (24),
               (25), (26), (27), (28), (29), (30), (31), (32), (33), (34), (35), (36),
               (37), (38), (39)) AS l(level)
),
sizes AS (
  SELECT tier, COUNT(*) AS uses FROM prefix_uses GROUP BY tier
),
marks AS (
  -- Every use, in its block of each level.
  SELECT u.tier AS tier, l.level AS level,
         CAST(FLOOR(u.clock / l.width) AS BIGINT) AS node,
         u.previous_use AS threshold, 0 AS kind, -1 AS request_seq, 0 AS position
  FROM prefix_uses u
  JOIN sizes s ON s.tier = u.tier
  JOIN levels l ON l.width <= s.uses
  UNION ALL
  -- Every lookup of a hash used before, in the blocks making up [0, s).
  SELECT q.tier AS tier, l.level AS level,
         CAST(FLOOR(q.request_start / l.width) AS BIGINT) - 1 AS node,
         q.last_use AS threshold, 1 AS kind, q.request_seq AS request_seq, q.position AS position
  FROM prefix_lookups q
  JOIN levels l ON MOD(CAST(FLOOR(q.request_start / l.width) AS BIGINT), 2) = 1
  WHERE q.last_use >= 0
),
counted AS (
  SELECT tier, kind, request_seq, position, threshold,
         SUM(1 - kind) OVER (PARTITION BY tier, level, node ORDER BY threshold, kind
                             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS uses_before
  FROM marks
)
SELECT tier, request_seq, position, SUM(uses_before) - MIN(threshold) - 1 AS distance
FROM counted
WHERE kind = 1
GROUP BY tier, request_seq, position;

-- Each request's steps: the distinct finite running maxima of its leading
-- blocks' distances (2^62 stands for a block never cached).
CREATE OR REPLACE TEMPORARY VIEW prefix_steps AS
WITH per_block AS (
  SELECT q.tier AS tier, q.request_seq AS request_seq, q.position AS position,
         COALESCE(d.distance, 4611686018427387904) AS distance
  FROM prefix_lookups q
  LEFT JOIN prefix_distances d
    ON d.tier = q.tier AND d.request_seq = q.request_seq AND d.position = q.position
),
running AS (
  SELECT tier, request_seq, position,
         MAX(distance) OVER (PARTITION BY tier, request_seq ORDER BY position
                             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS reuse_distance
  FROM per_block
)
SELECT tier, request_seq, reuse_distance, MAX(position) AS cached_blocks
FROM running
WHERE reuse_distance < 4611686018427387904
GROUP BY tier, request_seq, reuse_distance;

-- The sampled requests: a sample row stands for the first request (smallest
-- request_seq) with its arrival microsecond and lengths, as `planner` takes it.
CREATE OR REPLACE TEMPORARY VIEW aggregate_prefixes AS
WITH arrivals AS (
  SELECT tier, request_seq, input_tokens, output_tokens,
         CAST(FLOOR(ts) AS BIGINT) * 1000000
         + CASE WHEN FLOOR((ts - FLOOR(ts)) * 1000000 + 0.5) > 999999 THEN 999999
                ELSE CAST(FLOOR((ts - FLOOR(ts)) * 1000000 + 0.5) AS BIGINT)
           END AS arrival_us
  FROM requests
),
firsts AS (
  SELECT tier, arrival_us, input_tokens, output_tokens, MIN(request_seq) AS request_seq
  FROM arrivals
  GROUP BY tier, arrival_us, input_tokens, output_tokens
),
block_sizes AS (
  SELECT tier, MIN(block_tokens) AS block_tokens FROM request_blocks GROUP BY tier
)
SELECT 3 AS version, r.tier AS tier, CAST(r.sample_rank AS BIGINT) AS sample_rank,
       CAST(b.block_tokens AS BIGINT) AS block_tokens,
       CAST(s.reuse_distance AS BIGINT) AS reuse_distance,
       CAST(s.cached_blocks AS BIGINT) AS cached_blocks
FROM aggregate_ranked r
JOIN firsts f
  ON f.tier = r.tier AND f.arrival_us = r.arrival_us
  AND f.input_tokens = r.input_tokens AND f.output_tokens = r.output_tokens
JOIN prefix_steps s ON s.tier = f.tier AND s.request_seq = f.request_seq
JOIN block_sizes b ON b.tier = r.tier
ORDER BY tier, sample_rank, reuse_distance;
