//! `planner capacity`: per tier and configuration, the requests/s one replica
//! sustains under the tier's SLO by the queueing model and by the simulator.

use crate::capacity::{CapacityEntry, Verdict};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One configuration on one tier, both ways.
#[derive(Debug, Clone, Serialize)]
pub struct CapacityPair {
    pub config: String,
    pub gpus_per_replica: u32,
    pub analytic: Verdict,
    pub simulated: Verdict,
    /// Simulated over analytic requests/s when both serve.
    pub simulated_over_analytic: Option<f64>,
}

/// Pairs the two tables entry by entry (same configuration order).
pub fn pair(
    tiers: &[String],
    analytic: &[Vec<CapacityEntry>],
    simulated: &[Vec<CapacityEntry>],
) -> BTreeMap<String, Vec<CapacityPair>> {
    tiers
        .iter()
        .zip(analytic.iter().zip(simulated))
        .map(|(name, (a, s))| {
            let rows = a
                .iter()
                .zip(s)
                .map(|(a, s)| CapacityPair {
                    config: a.config.label(),
                    gpus_per_replica: a.gpus_per_replica,
                    simulated_over_analytic: match (&a.verdict, &s.verdict) {
                        (Verdict::Serves(x), Verdict::Serves(y)) if x.max_rps > 0.0 => {
                            Some(y.max_rps / x.max_rps)
                        }
                        _ => None,
                    },
                    analytic: a.verdict.clone(),
                    simulated: s.verdict.clone(),
                })
                .collect();
            (name.clone(), rows)
        })
        .collect()
}

fn cell(v: &Verdict) -> String {
    match v {
        Verdict::Serves(s) => format!("{:>9.3} ({})", s.max_rps, s.binding),
        Verdict::Cannot { .. } => "cannot".into(),
    }
}

pub fn render(scenario: &str, pairs: &BTreeMap<String, Vec<CapacityPair>>) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "Requests/s one replica sustains under each tier's SLO — {scenario}: queueing model vs replay simulator"
    );
    for (tier, rows) in pairs {
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "{tier:<22} {:>22} {:>22} {:>9}",
            "analytic (limit)", "simulated (limit)", "sim/ana"
        );
        for r in rows {
            if matches!(
                (&r.analytic, &r.simulated),
                (Verdict::Cannot { .. }, Verdict::Cannot { .. })
            ) {
                continue;
            }
            let _ = writeln!(
                o,
                "  {:<20} {:>22} {:>22} {:>9}",
                r.config,
                cell(&r.analytic),
                cell(&r.simulated),
                r.simulated_over_analytic
                    .map_or("—".to_string(), |x| format!("{x:.2}"))
            );
        }
    }
    o
}
