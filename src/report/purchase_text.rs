//! The purchase block that opens the text report: what to reserve, rent
//! and send to the API, the cost per year (and over the term), and how each
//! tier is deployed ([`crate::money::purchase`]).

use crate::base::numbers::{group_thousands, usd};
use crate::money::purchase::Purchase;
use std::fmt::Write as _;

/// One reservation in words: count, type, term, commitment, calibration.
pub(crate) fn reserve_sentence(r: &crate::money::purchase::Reserve) -> String {
    format!(
        "{} {} GPUs, {}: {} USD per year, paid used or not (figures {})",
        r.gpus,
        r.gpu_type,
        r.term,
        usd(r.usd_per_year),
        r.calibration.words()
    )
}

/// The GPU types the plan rests on without figures measured on them, in
/// words (`None` when every type's were measured).
pub(crate) fn caution(p: &Purchase) -> Option<String> {
    let n = p.unmeasured_gpus.len();
    (n > 0).then(|| {
        format!(
            "{} carr{} this plan on figures not measured on {}",
            p.unmeasured_gpus.join(", "),
            if n == 1 { "ies" } else { "y" },
            if n == 1 { "it" } else { "them" }
        )
    })
}

/// GPU-hours as people read them: whole from 100, three significant digits
/// below.
fn hours(h: f64) -> String {
    if h >= 100.0 {
        group_thousands(h.round() as i64)
    } else {
        crate::base::numbers::significant(h, 3)
    }
}

/// The "PURCHASE" block, tiers in `tier_order`.
pub(crate) fn render(p: &Purchase, tier_order: &[String], horizon_hours: f64) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "PURCHASE (what to sign for; a year is the {} h horizon's pattern repeated {:.1} times)",
        crate::base::numbers::significant(horizon_hours, 4),
        crate::money::purchase::HOURS_PER_YEAR / horizon_hours.max(1e-9)
    );
    if p.reserve.is_empty() {
        let _ = writeln!(o, "  reserve    nothing");
    }
    for (i, r) in p.reserve.iter().enumerate() {
        let _ = writeln!(
            o,
            "  {:<10} {}",
            if i == 0 { "reserve" } else { "" },
            reserve_sentence(r)
        );
    }
    if p.rent.is_empty() {
        let _ = writeln!(o, "  rent       nothing on demand");
    }
    for (i, r) in p.rent.iter().enumerate() {
        let _ = writeln!(
            o,
            "  {:<10} {} on demand: up to {} at once, {} GPU-hours over the horizon ({} per 730-h month)",
            if i == 0 { "rent" } else { "" },
            r.gpu_type,
            r.peak_gpus,
            hours(r.gpu_hours),
            hours(r.gpu_hours_per_month)
        );
    }
    let _ = writeln!(
        o,
        "  API        {}",
        if p.api_share > 0.0 {
            format!(
                "{:.1}% of requests: {} USD over the horizon",
                p.api_share * 100.0,
                usd(p.api_usd)
            )
        } else {
            "nothing".to_string()
        }
    );
    let _ = writeln!(
        o,
        "  per year   {} USD: reserved {}, rented {}, API {}",
        usd(p.usd_per_year),
        usd(p.reserved_usd_per_year),
        usd(p.rented_usd_per_year),
        usd(p.api_usd_per_year)
    );
    if let (Some(m), Some(t)) = (p.term_months, p.term_usd) {
        let _ = writeln!(o, "  term       {m} months: {} USD", usd(t));
    }
    for (i, name) in tier_order.iter().enumerate() {
        let Some(d) = p.deployment.get(name) else {
            continue;
        };
        let parts: Vec<String> = d
            .iter()
            .map(|c| {
                format!(
                    "{} TP{} on {}, batch cap {}, chunks of {} tokens, {}, {:.1}% (up to {} replica{})",
                    c.gpu_type,
                    c.tensor_parallel,
                    c.engine,
                    c.max_batch,
                    c.max_batched_tokens,
                    c.precision.to_uppercase(),
                    c.share * 100.0,
                    c.max_replicas,
                    if c.max_replicas == 1 { "" } else { "s" }
                )
            })
            .collect();
        let _ = writeln!(
            o,
            "  {:<10} {name}: {}",
            if i == 0 { "deploy" } else { "" },
            if parts.is_empty() {
                "all to the API".to_string()
            } else {
                parts.join("; ")
            }
        );
    }
    if let Some(c) = caution(p) {
        let _ = writeln!(
            o,
            "  caution    {c}: a benchmark run of one replica (HOW TO RUN AND CHECK) before signing is the check"
        );
    }
    let _ = writeln!(
        o,
        "  seed       {}: the capacity figures and the replay are simulations of this seed; solve with other seeds (--set simulation.seed=N) to see how far these figures move",
        p.seed
    );
    o
}
