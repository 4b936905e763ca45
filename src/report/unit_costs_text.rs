//! The per-token cost table of a plan: USD per 1M tokens (input and output
//! together, and output alone) per tier and in total, beside the API's price
//! for the same tokens.

use crate::money::unit_costs::{UnitCost, UnitCosts};
use std::fmt::Write as _;

/// A per-token figure with enough digits to be read at any price level.
pub fn per_token_usd(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.3}")
    } else {
        super::significant(v, 3)
    }
}

fn row(o: &mut String, name: &str, u: &UnitCost, with_api: bool) {
    let api = |v: Option<f64>| v.map_or("—".to_string(), per_token_usd);
    let _ = write!(
        o,
        "  {name:<14} {:>14} {:>14} {:>14}",
        per_token_usd(u.usd_per_million_tokens),
        per_token_usd(u.usd_per_million_output_tokens),
        per_token_usd(u.usd_per_1k_output_tokens),
    );
    if with_api {
        let _ = write!(
            o,
            " {:>14} {:>14}",
            api(u.api_usd_per_million_tokens),
            api(u.api_usd_per_million_output_tokens)
        );
    }
    let _ = writeln!(o);
}

/// Appends the table to `o`.
pub fn render(o: &mut String, costs: &UnitCosts, with_api: bool) {
    let _ = writeln!(
        o,
        "COST PER TOKEN (USD; a tier's cost is its API spend plus its part of GPU spend, by the GPUs it occupies of each type in each slot)"
    );
    let _ = write!(
        o,
        "  {:<14} {:>14} {:>14} {:>14}",
        "tier", "per 1M in+out", "per 1M out", "per 1k out"
    );
    if with_api {
        let _ = write!(o, " {:>14} {:>14}", "API 1M in+out", "API 1M out");
    }
    let _ = writeln!(o);
    for (name, u) in &costs.tiers {
        row(o, name, u, with_api);
    }
    row(o, "all tiers", &costs.total, with_api);
    let _ = writeln!(
        o,
        "  in+out: the cost over input and output tokens together, as API prices are compared; out: the same cost over"
    );
    let _ = writeln!(
        o,
        "  output tokens alone (per 1k out is that figure per 1,000, all output tokens, SLO met or not; per 1,000 SLO-met"
    );
    if with_api {
        let _ = writeln!(
            o,
            "  output tokens is in REPLAY); API: what the API's list prices charge for the same input and output tokens."
        );
    } else {
        let _ = writeln!(o, "  output tokens is in REPLAY).");
    }
}
