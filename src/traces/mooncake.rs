//! Mooncake's JSON lines (`{"timestamp": ms, "input_length": n,
//! "output_length": n, "hash_ids": [...]}`): the request, and the hashes of
//! its prompt's blocks.
//!
//! `hash_ids` names each 512-token block of the prompt by a (remapped)
//! hash of the block and every block before it, so two prompts that share
//! a prefix of whole blocks share the leading hashes, and the last block
//! may be partly filled. The block size is the traces': the samples of
//! `kvcache-ai/Mooncake`'s `FAST25-release/README.md` (6,955 tokens with 14
//! hashes, 6,472 with 13) and every one of the 12,031 rows of
//! `data/mooncake/conversation_trace.jsonl` carry exactly `⌈n / 512⌉`
//! hashes for a prompt of `n` tokens. A row naming more hashes than that
//! contradicts its own length.

use super::row_error::RowError;
use super::Request;
use serde::Deserialize;

/// Tokens in one block of a Mooncake trace's `hash_ids`.
pub(crate) const MOONCAKE_BLOCK_TOKENS: u32 = 512;

/// A row as the request readers take it: its `hash_ids`, if any, are not
/// read (a prefix cache reads them, [`parse_row_with_blocks`]).
#[derive(Deserialize)]
struct Row {
    timestamp: serde_json::Number,
    input_length: serde_json::Number,
    output_length: serde_json::Number,
}

/// A row with its block hashes.
#[derive(Deserialize)]
struct RowWithHashes {
    #[serde(flatten)]
    row: Row,
    #[serde(default)]
    hash_ids: Option<serde_json::Value>,
}

fn json_count(n: &serde_json::Number, key: &str) -> Result<u32, String> {
    n.as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .ok_or_else(|| format!("`{key}` must be a non-negative integer, got {n}"))
}

/// Parses one Mooncake JSON line (timestamp in milliseconds); its
/// `hash_ids` are not read.
pub(super) fn parse_row(row: &[u8]) -> Result<Request, RowError> {
    let parsed: Row = serde_json::from_slice(row).map_err(|e| not_a_row(&e))?;
    request_of(&parsed)
}

/// [`parse_row`], with the prompt's block hashes checked (empty when the
/// row has none).
pub(crate) fn parse_row_with_blocks(row: &[u8]) -> Result<(Request, Vec<u64>), RowError> {
    let parsed: RowWithHashes = serde_json::from_slice(row).map_err(|e| not_a_row(&e))?;
    let request = request_of(&parsed.row)?;
    let blocks = match &parsed.hash_ids {
        None => Vec::new(),
        Some(ids) => block_hashes(ids, request.input_tokens).map_err(|message| RowError {
            column: find(row, b"\"hash_ids\"").map(|at| at as u64 + 1),
            message,
        })?,
    };
    Ok((request, blocks))
}

/// The error of a line that is not a Mooncake row.
fn not_a_row(e: &serde_json::Error) -> RowError {
    // The row's own line and column locate it: the message without
    // serde's "at line 1 column N".
    let what = e.to_string();
    let what = crate::base::toml_file::plain_type_names(
        what.split(" at line ").next().unwrap_or_default(),
    );
    RowError {
        column: Some(e.column() as u64),
        message: format!("not a Mooncake JSON line ({what}); expected {{\"timestamp\": ms, \"input_length\": n, \"output_length\": n}}"),
    }
}

/// The request of a parsed row.
fn request_of(parsed: &Row) -> Result<Request, RowError> {
    let ms = parsed
        .timestamp
        .as_f64()
        .filter(|t| *t >= 0.0)
        .ok_or_else(|| {
            format!(
                "`timestamp` must be non-negative milliseconds, got {}",
                parsed.timestamp
            )
        })?;
    Ok(Request {
        arrival_s: ms / 1000.0,
        input_tokens: json_count(&parsed.input_length, "input_length")?,
        output_tokens: json_count(&parsed.output_length, "output_length")?,
    })
}

/// The hashes of `ids`, a list of non-negative integers no longer than the
/// blocks of a prompt of `input_tokens`.
fn block_hashes(ids: &serde_json::Value, input_tokens: u32) -> Result<Vec<u64>, String> {
    let not_a_list = || {
        format!(
            "`hash_ids` must be a list of non-negative integers (one hash per {MOONCAKE_BLOCK_TOKENS}-token block of the prompt), got {}",
            crate::base::text::excerpt(ids.to_string().as_bytes())
        )
    };
    let list = ids.as_array().ok_or_else(not_a_list)?;
    let hashes = list
        .iter()
        .map(serde_json::Value::as_u64)
        .collect::<Option<Vec<u64>>>()
        .ok_or_else(not_a_list)?;
    let blocks = input_tokens.div_ceil(MOONCAKE_BLOCK_TOKENS) as usize;
    if hashes.len() > blocks {
        return Err(format!(
            "`hash_ids` names {} blocks, but a prompt of {input_tokens} tokens makes {blocks} blocks of {MOONCAKE_BLOCK_TOKENS} tokens: the hashes were made with another block size or belong to a longer prompt",
            hashes.len()
        ));
    }
    Ok(hashes)
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_parses_with_its_blocks() {
        let (r, blocks) = parse_row_with_blocks(
            br#"{"timestamp": 3000, "input_length": 600, "output_length": 500, "hash_ids": [0, 1]}"#,
        )
        .unwrap();
        assert_eq!(r.arrival_s, 3.0);
        assert_eq!((r.input_tokens, r.output_tokens), (600, 500));
        assert_eq!(blocks, [0, 1]);
        let (_, none) =
            parse_row_with_blocks(br#"{"timestamp": 1, "input_length": 5, "output_length": 1}"#)
                .unwrap();
        assert!(none.is_empty());
        assert!(parse_row(br#"{"timestamp": 1, "input_length": -5, "output_length": 1}"#).is_err());
    }

    #[test]
    fn hashes_that_are_not_a_list_of_integers_are_refused_at_the_key() {
        for row in [
            &br#"{"timestamp": 1, "input_length": 600, "output_length": 1, "hash_ids": "0,1"}"#[..],
            br#"{"timestamp": 1, "input_length": 600, "output_length": 1, "hash_ids": [0, -1]}"#,
            br#"{"timestamp": 1, "input_length": 600, "output_length": 1, "hash_ids": [0, 1.5]}"#,
        ] {
            // The request readers pass over the hashes; a prefix cache
            // refuses them.
            assert!(parse_row(row).is_ok());
            let e = parse_row_with_blocks(row).unwrap_err();
            assert!(
                e.message.contains("list of non-negative integers"),
                "{}",
                e.message
            );
            assert_eq!(e.column, Some(59), "{}", e.message);
        }
    }

    #[test]
    fn more_hashes_than_the_prompts_blocks_are_refused() {
        // 600 tokens are two blocks of 512 (the second part-filled).
        let e = parse_row_with_blocks(
            br#"{"timestamp": 1, "input_length": 600, "output_length": 1, "hash_ids": [0, 1, 2]}"#,
        )
        .unwrap_err();
        assert!(e.message.contains("names 3 blocks"), "{}", e.message);
        assert!(e.message.contains("makes 2 blocks of 512"), "{}", e.message);
        // Fewer hashes than blocks: a prompt whose tail was not hashed.
        assert!(parse_row_with_blocks(
            br#"{"timestamp": 1, "input_length": 1025, "output_length": 1, "hash_ids": [0]}"#
        )
        .is_ok());
    }
}
