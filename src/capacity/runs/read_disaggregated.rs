//! A disaggregated row of the shared runs file: its prefill and decode
//! workers (`prefill_*` and `decode_*` columns) and the concurrency its
//! client ran (the id's `_cN_`; the row's own `batch_size` is empty).

use super::{DisaggregatedRun, RunSide};
use crate::perf::Layout;

/// The sides of a disaggregated row and its client's concurrency, or why
/// the row cannot be modelled. `cell(name)`: the row's field in column
/// `name`, `None` when the file has no such column.
pub(super) fn disaggregated_of<'a>(
    cell: impl Fn(&str) -> Option<&'a str>,
    moe: bool,
    id_concurrency: Option<f64>,
) -> Result<(DisaggregatedRun, u32), String> {
    let number = |name: &str| {
        cell(name)
            .and_then(|t| t.parse::<f64>().ok())
            .filter(|v| v.is_finite())
    };
    let side = |prefix: &str| -> Result<RunSide, String> {
        let whole = |name: &str| {
            number(&format!("{prefix}_{name}"))
                .filter(|v| *v >= 1.0 && v.fract() == 0.0 && *v <= 65_536.0)
                .map(|v| v as u32)
        };
        let Some(workers) = whole("num_workers") else {
            return Err(format!(
                "a disaggregated row without a whole `{prefix}_num_workers`"
            ));
        };
        if whole("pp_size").is_some_and(|p| p > 1) {
            return Err("pipeline-parallel".into());
        }
        let layout = side_layout(
            whole("tp_size").unwrap_or(1),
            whole("attention_dp_size").unwrap_or(1),
            whole("moe_tp_size").unwrap_or(1),
            whole("moe_ep_size").unwrap_or(1),
            moe,
        )?;
        Ok(RunSide {
            workers,
            layout,
            batch: whole("batch_size"),
        })
    };
    let Some(concurrency) = id_concurrency.filter(|c| *c >= 1.0 && *c <= 65_536.0) else {
        return Err("a disaggregated row whose id names no concurrency (`_cN_`)".into());
    };
    Ok((
        DisaggregatedRun {
            prefill: side("prefill")?,
            decode: side("decode")?,
        },
        concurrency as u32,
    ))
}

/// A side's layout as the disaggregated rows record it: TP x attention-DP
/// GPUs a worker, its experts over `moe_tp` x `moe_ep` of them (the
/// aggregated rows' product readings, `read::layout_of`, do not apply:
/// these rows state wide expert parallelism as it ran, e.g. attention-DP
/// 32 with EP 32 on a GB200 rack).
fn side_layout(tp: u32, dp: u32, moe_tp: u32, moe_ep: u32, moe: bool) -> Result<Layout, String> {
    if !moe {
        return if dp > 1 {
            Err("data-parallel attention on a dense model".into())
        } else {
            Ok(Layout::tp(tp))
        };
    }
    if moe_tp * moe_ep != tp * dp {
        return Err("the MoE layout columns do not multiply out (`moe_tp_size` x `moe_ep_size` differs from `tp_size` x `attention_dp_size`)".into());
    }
    Ok(Layout {
        tp,
        ep: moe_ep,
        attention_dp: dp,
    })
}

#[cfg(test)]
mod tests {
    use super::disaggregated_of;
    use std::collections::BTreeMap;

    #[test]
    fn a_disaggregated_row_reads_its_two_sides_and_the_ids_concurrency() {
        let row: BTreeMap<&str, &str> = [
            ("prefill_num_workers", "1"),
            ("prefill_tp_size", "1"),
            ("prefill_attention_dp_size", "8"),
            ("prefill_moe_tp_size", "1"),
            ("prefill_moe_ep_size", "8"),
            ("prefill_batch_size", "1"),
            ("decode_num_workers", "1"),
            ("decode_tp_size", "1"),
            ("decode_attention_dp_size", "32"),
            ("decode_moe_tp_size", "1"),
            ("decode_moe_ep_size", "32"),
            ("decode_batch_size", "64"),
        ]
        .into_iter()
        .collect();
        let (run, c) = disaggregated_of(|n| row.get(n).copied(), true, Some(2048.0)).unwrap();
        assert_eq!(c, 2048);
        assert_eq!(run.prefill.workers, 1);
        assert_eq!(run.prefill.layout.gpus(), 8);
        assert_eq!(run.decode.layout.gpus(), 32);
        assert_eq!((run.decode.layout.ep, run.decode.batch), (32, Some(64)));
        let e = disaggregated_of(|n| row.get(n).copied(), true, None).unwrap_err();
        assert!(e.contains("names no concurrency"), "{e}");
        let e = disaggregated_of(|_| None, true, Some(8.0)).unwrap_err();
        assert!(e.contains("prefill_num_workers"), "{e}");
    }
}
