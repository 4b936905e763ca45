//! `planner solve --format csv`: the plan's schedule, one line per slot.

use super::csv::{line, number};
use crate::solve::Outcome;

/// The per-slot schedule as CSV.
pub fn render(outcome: &Outcome) -> String {
    let plan = &outcome.plan;
    let schedule = crate::money::schedule::of(plan, &outcome.demand, &outcome.prices);
    // GPU types the plan holds in some slot (reserved, rented or spot).
    let gpus: Vec<&String> = plan
        .reserved
        .iter()
        .filter(|(g, &n)| {
            n > 0
                || plan
                    .on_demand
                    .iter()
                    .any(|s| s.get(*g).is_some_and(|&x| x > 0))
                || plan
                    .spot
                    .iter()
                    .flatten()
                    .any(|s| s.get(*g).is_some_and(|&x| x > 0))
        })
        .map(|(g, _)| g)
        .collect();
    let tiers: Vec<&String> = plan.tiers.keys().collect();
    let mut header: Vec<String> = ["slot", "start_hour", "sum_of_tier_peaks_rps"]
        .map(String::from)
        .to_vec();
    for t in &tiers {
        for f in ["peak_rps", "mean_rps", "api_share", "replicas", "gpus"] {
            header.push(format!("{t}_{f}"));
        }
    }
    for g in &gpus {
        for f in ["reserved", "on_demand", "spot", "in_use"] {
            header.push(format!("{g}_{f}"));
        }
    }
    // A pooled fleet: the GPUs each model holds in the slot, all types.
    let slots = schedule.len();
    let models: Vec<(&String, Vec<u32>)> = outcome
        .purchase
        .pool
        .iter()
        .flat_map(|p| p.models.keys().map(move |m| (m, p.gpus_of(m, slots))))
        .collect();
    for (m, _) in &models {
        header.push(format!("model_{m}_gpus"));
    }
    header.extend(
        [
            "carried_reserved_rps",
            "carried_on_demand_rps",
            "carried_spot_rps",
            "api_rps",
            "cost_usd",
        ]
        .map(String::from),
    );
    let mut out = line(&header);
    for s in &schedule {
        let mut cells = vec![
            s.slot.to_string(),
            number(s.start_hour),
            number(s.demand_rps),
        ];
        for t in &tiers {
            let x = &s.tiers[*t];
            cells.extend([
                number(x.peak_rps),
                number(x.mean_rps),
                number(x.api_share),
                x.replicas.to_string(),
                x.gpus.to_string(),
            ]);
        }
        for g in &gpus {
            let n = |m: &std::collections::BTreeMap<String, u32>| {
                m.get(*g).copied().unwrap_or(0).to_string()
            };
            cells.extend([
                n(&s.reserved_gpus),
                n(&s.on_demand_gpus),
                n(&s.spot_gpus),
                n(&s.in_use_gpus),
            ]);
        }
        for (_, by_slot) in &models {
            cells.push(by_slot.get(s.slot).copied().unwrap_or(0).to_string());
        }
        cells.extend([
            number(s.reserved_rps),
            number(s.on_demand_rps),
            number(s.spot_rps),
            number(s.api_rps),
            number(s.cost_usd),
        ]);
        out.push_str(&line(&cells));
    }
    out
}
