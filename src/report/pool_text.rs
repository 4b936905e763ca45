//! The purchase block's lines for a pooled fleet: each model's share of the
//! pool, the plans of each model alone, where the models share GPUs and
//! the GPUs that switch model ([`crate::money::pool`]).

use crate::base::numbers::usd;
use crate::money::pool::Pool;
use std::fmt::Write as _;

/// Slots as ranges: `0-5, 9, 20-23`.
pub(crate) fn slot_ranges(slots: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < slots.len() {
        let mut j = i;
        while j + 1 < slots.len() && slots[j + 1] == slots[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            slots[i].to_string()
        } else {
            format!("{}-{}", slots[i], slots[j])
        });
        i = j + 1;
    }
    out.join(", ")
}

/// The pooled plan against each model planned alone, in words: the saving
/// as a share of what the separate plans cost together, or what the
/// separate plans leave out when the pool costs more.
pub(crate) fn saving_sentence(pool: &Pool) -> String {
    match (pool.each_model_alone_usd, pool.saving_vs_each_alone) {
        (Some(a), Some(saving)) if saving >= 0.0 => format!(
            "each model planned alone costs {} USD together: the pool saves {} USD ({:.1}% of that)",
            usd(a),
            usd(a - pool.pooled_usd),
            saving * 100.0
        ),
        (Some(a), Some(_)) => format!(
            "each model planned alone costs {} USD together, {} USD less than the pool: the separate plans are priced on the horizon alone, without what the pooled plan also weighs (the price for complexity, OPERATIONS; with a term and growth, reservations sized for the grown months); ALTERNATIVES says which applies",
            usd(a),
            usd(pool.pooled_usd - a)
        ),
        _ => "not every model could be planned alone".to_string(),
    }
}

/// The `pool` lines of the purchase block.
pub(crate) fn render(o: &mut String, pool: &Pool) {
    let total_usd = pool.pooled_usd;
    for (i, (model, s)) in pool.models.iter().enumerate() {
        let share = if total_usd > 0.0 {
            s.cost_usd / total_usd * 100.0
        } else {
            0.0
        };
        let alone = s
            .alone_usd
            .map_or(String::new(), |a| format!("; alone {} USD", usd(a)));
        let api = if s.has_api {
            format!("{:.1}% to its API", s.api_share * 100.0)
        } else {
            "no API offer".to_string()
        };
        let _ = writeln!(
            o,
            "  {:<10} {model} ({}): {} USD, {share:.1}% of the cost, {:.1} GPU-hours, {:.3} USD per 1M tokens, {api}{alone}",
            if i == 0 { "pool" } else { "" },
            s.tiers.join(", "),
            usd(s.cost_usd),
            s.gpu_hours,
            s.usd_per_million_tokens
        );
    }
    let vs = saving_sentence(pool);
    let _ = writeln!(o, "  {:<10} {vs}", "");
    let shared: Vec<String> = pool
        .gpu_types
        .iter()
        .filter(|(_, t)| !t.shared_slots.is_empty())
        .map(|(g, t)| format!("{g} in slots {}", slot_ranges(&t.shared_slots)))
        .collect();
    let loaded = pool.gpus_loaded;
    let _ = writeln!(
        o,
        "  {:<10} models share {}; {} GPU{} switch model over the horizon, {loaded} GPU loads in all (each serves nothing while its model loads)",
        "",
        if shared.is_empty() {
            "no GPU type in any slot".to_string()
        } else {
            shared.join("; ")
        },
        pool.gpus_switched,
        if pool.gpus_switched == 1 { "" } else { "s" }
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn slots_read_as_ranges() {
        assert_eq!(super::slot_ranges(&[0, 1, 2, 5, 7, 8]), "0-2, 5, 7-8");
        assert_eq!(super::slot_ranges(&[]), "");
    }
}
