//! `planner capacity`: per tier and configuration, the requests/s one replica
//! sustains under the tier's SLO by the queueing model and by the simulator,
//! and the fleet step functions of the configurations the screen kept.

use crate::capacity::fleet::FleetCapacity;
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
    /// `None` when the simulator's screen did not try this configuration
    /// (batch caps are screened at one chunk size, chunk sizes at the best
    /// batch cap).
    pub simulated: Option<Verdict>,
    /// Simulated over analytic requests/s when both serve.
    pub simulated_over_analytic: Option<f64>,
    /// Fleets of 1…N replicas, for the configurations the screen kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet: Option<FleetCapacity>,
    /// The measured median |error| of mean TTFT and TPOT of the engine's
    /// profile on the configuration's GPU and precision, the band its
    /// figures carry (`None`: no run measured it).
    pub measured_error: Option<MeasuredBand>,
}

/// A configuration's measured error: the band on its figures.
#[derive(Debug, Clone, Serialize)]
pub struct MeasuredBand {
    pub ttft: f64,
    pub tpot: f64,
    /// The runs it was measured on.
    pub basis: String,
}

/// One line on a tier's table: how many configurations serve by each
/// method, and the one of most simulated requests/s per GPU.
fn summary(rows: &[CapacityPair]) -> String {
    let serves = |v: &Verdict| matches!(v, Verdict::Serves(_));
    let analytic = rows.iter().filter(|r| serves(&r.analytic)).count();
    let simulated = rows
        .iter()
        .filter(|r| r.simulated.as_ref().is_some_and(serves))
        .count();
    let fleets = rows.iter().filter(|r| r.fleet.is_some()).count();
    let best = rows
        .iter()
        .filter_map(|r| match &r.simulated {
            Some(Verdict::Serves(s)) => Some((s.max_rps / f64::from(r.gpus_per_replica), r)),
            _ => None,
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let unlisted = rows.iter().filter(|r| !listed(r)).count();
    format!(
        "{} configurations: {analytic} serve by the queueing model, {simulated} by simulation, {fleets} with fleets simulated{}{}",
        rows.len(),
        best.map_or(String::new(), |(per_gpu, r)| format!(
            "; most per GPU alone: {} at {per_gpu:.3} req/s per GPU",
            r.config
        )),
        if unlisted == 0 {
            String::new()
        } else {
            format!(
                "; {unlisted} that neither way can serve are not listed (`--format json` says why)"
            )
        }
    )
}

/// Whether a row is on the table: every configuration but those that
/// cannot serve by the queueing model and cannot (or were not screened) by
/// simulation.
fn listed(r: &CapacityPair) -> bool {
    !matches!(
        (&r.analytic, &r.simulated),
        (Verdict::Cannot { .. }, Some(Verdict::Cannot { .. }) | None)
    )
}

/// Pairs the two tables by configuration.
pub fn pair(
    tiers: &[String],
    analytic: &[Vec<CapacityEntry>],
    simulated: &[Vec<CapacityEntry>],
    error_of: impl Fn(&CapacityEntry) -> Option<MeasuredBand>,
) -> BTreeMap<String, Vec<CapacityPair>> {
    tiers
        .iter()
        .zip(analytic.iter().zip(simulated))
        .map(|(name, (a, s))| {
            let rows = a
                .iter()
                .map(|a| {
                    let s = s.iter().find(|s| s.config == a.config);
                    CapacityPair {
                        config: a.config.label(),
                        gpus_per_replica: a.gpus_per_replica,
                        simulated_over_analytic: match (&a.verdict, s.map(|s| &s.verdict)) {
                            (Verdict::Serves(x), Some(Verdict::Serves(y))) if x.max_rps > 0.0 => {
                                Some(y.max_rps / x.max_rps)
                            }
                            _ => None,
                        },
                        analytic: a.verdict.clone(),
                        simulated: s.map(|s| s.verdict.clone()),
                        fleet: s.and_then(|s| s.fleet.clone()),
                        measured_error: error_of(a),
                    }
                })
                // Disaggregated units: sized by the simulation alone.
                .chain(s.iter().filter(|s| s.config.disaggregated.is_some()).map(|s| {
                    CapacityPair {
                        config: s.config.label(),
                        gpus_per_replica: s.gpus_per_replica,
                        simulated_over_analytic: None,
                        analytic: Verdict::Cannot {
                            reason: "a disaggregated unit: the queueing model has no prefill and decode apart (simulated only)".into(),
                            best_ttft_ms: None,
                            best_tpot_ms: None,
                        },
                        simulated: Some(s.verdict.clone()),
                        fleet: s.fleet.clone(),
                        measured_error: error_of(s),
                    }
                }))
                .collect();
            (name.clone(), rows)
        })
        .collect()
}

fn cell(v: Option<&Verdict>) -> String {
    match v {
        Some(Verdict::Serves(s)) => format!("{:>9.3} ({})", s.max_rps, s.binding),
        Some(Verdict::Cannot { .. }) => "cannot".into(),
        None => "not screened".into(),
    }
}

/// A step function in a line: the rate of n replicas at n = 1, 2, 4, 8, …
/// and at the largest fleet, each with its attainment interval.
fn fleet_line(f: &FleetCapacity) -> String {
    let shown = f
        .points
        .iter()
        .filter(|p| p.replicas.is_power_of_two() || p.replicas == f.max_replicas());
    let cells: Vec<String> = shown
        .map(|p| {
            format!(
                "n={} {:.2} [{:.1}–{:.1}%]",
                p.replicas,
                p.max_rps,
                p.attainment_low * 100.0,
                p.attainment_high * 100.0
            )
        })
        .collect();
    format!(
        "saturated {:.2}, ceiling {:.2} req/s per replica; {}",
        f.saturated_rps_per_replica,
        f.roofline_rps_per_replica,
        cells.join(", ")
    )
}

pub fn render(scenario: &str, pairs: &BTreeMap<String, Vec<CapacityPair>>) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "Requests/s one replica sustains under each tier's SLO — {scenario}: queueing model vs replay simulator"
    );
    for (tier, rows) in pairs {
        // The configuration column fits the longest label (a layout's TP,
        // EP and attention-DP make some long).
        let width = rows
            .iter()
            .filter(|r| listed(r))
            .map(|r| r.config.chars().count())
            .max()
            .unwrap_or(0)
            .max(28);
        let _ = writeln!(o);
        let _ = writeln!(
            o,
            "{tier:<w$} {:>22} {:>22} {:>9} {:>16}",
            "analytic (limit)",
            "simulated (limit)",
            "sim/ana",
            "band TTFT/TPOT",
            w = width + 2
        );
        for r in rows.iter().filter(|r| listed(r)) {
            let _ = writeln!(
                o,
                "  {:<width$} {:>22} {:>22} {:>9} {:>16}",
                r.config,
                cell(Some(&r.analytic)),
                cell(r.simulated.as_ref()),
                r.simulated_over_analytic
                    .map_or("—".to_string(), |x| format!("{x:.2}")),
                r.measured_error
                    .as_ref()
                    .map_or("not measured".to_string(), |e| format!(
                        "±{:.0}% / ±{:.0}%",
                        e.ttft * 100.0,
                        e.tpot * 100.0
                    ))
            );
        }
        let _ = writeln!(o, "  {}", summary(rows));
        let _ = writeln!(
            o,
            "  band: the median |error| of mean TTFT and TPOT the engine's profile measured on the GPU and precision (with fewer than 10 runs there, the larger of theirs and all the engine's runs'; `--format json`: on which runs); the purchase's band line prices its slower edge"
        );
        let _ = writeln!(
            o,
            "  fleets behind the router (req/s the fleet sustains, 95% interval of its attainment):"
        );
        for r in rows {
            if let Some(f) = &r.fleet {
                let _ = writeln!(o, "    {:<width$} {}", r.config, fleet_line(f));
            }
        }
    }
    o
}
