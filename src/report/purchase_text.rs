//! The purchase block that opens the text report: what to reserve, rent
//! and send to the API, the cost per year (and over the term), and how each
//! tier is deployed ([`crate::money::purchase`]).

use crate::base::numbers::{group_thousands, usd};
use crate::money::purchase::Purchase;
use std::fmt::Write as _;

/// One reservation in words: count, type, term, commitment, calibration.
pub(crate) fn reserve_sentence(r: &crate::money::purchase::Reserve) -> String {
    format!(
        "{} {} {}, {}: {} USD per year, paid used or not (figures {})",
        r.gpus,
        r.gpu_type,
        crate::base::numbers::noun(u64::from(r.gpus), "GPU", "GPUs"),
        r.term,
        usd(r.usd_per_year),
        r.calibration.words()
    )
}

/// One GPU type rented in words: the most at once and the GPU-hours.
pub(crate) fn rent_sentence(r: &crate::money::purchase::Rent) -> String {
    format!(
        "{} on demand: up to {} at once, {} GPU-hours over the horizon ({} per 730-h month)",
        r.gpu_type,
        r.peak_gpus,
        hours(r.gpu_hours),
        hours(r.gpu_hours_per_month)
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

/// The reservation levels of one GPU type in words: a near tie and the
/// level that commits least, or how much dearer the neighbouring levels are.
pub(crate) fn levels_sentence(l: &crate::money::purchase::ReservationLevels) -> String {
    let pct = |x: f64| {
        if (x * 100.0).abs() < 0.1 {
            format!("{:+.2}%", x * 100.0)
        } else {
            format!("{:+.1}%", x * 100.0)
        }
    };
    let others: Vec<String> = l
        .levels
        .iter()
        .filter(|v| v.gpus != l.chosen_gpus)
        .filter(|v| v.gpus.abs_diff(l.chosen_gpus) <= 2 * l.step_gpus)
        .map(|v| format!("{}: {}", v.gpus, pct(v.vs_chosen)))
        .collect();
    if l.near_tie {
        let tie = format!(
            "reserving {}-{} {} costs within 1% of the plan {} ({}): a near tie the simulated figures do not decide",
            l.fewest_within,
            l.most_within,
            l.gpu_type,
            l.basis,
            others.join(", "),
        );
        // A level cheaper than the plan's own: the plan holds the fewest,
        // the others cheaper by no more than its solver gap (the rule
        // `planning.reserve_fewest_within_gap` takes such a plan; a solver
        // may return one too, so the sentence states what holds either way).
        let cheaper = l.levels.iter().any(|v| v.vs_chosen < 0.0);
        let n = l.fewest_within;
        if cheaper && l.chosen_gpus == n {
            format!("{tie}, and the plan reserves the fewest, {n}: the others cost less by no more than its solver gap")
        } else {
            let (s, verb) = if n == 1 { ("", "s") } else { ("s", "") };
            format!("{tie}; {n} GPU{s} commit{verb} least")
        }
    } else {
        format!(
            "{} {} is a clear choice: {} with the others re-planned ({})",
            l.chosen_gpus,
            l.gpu_type,
            l.basis,
            others.join(", ")
        )
    }
}

/// The confidence band's line: the reservation and cost with every step
/// slower by its profile's measured error, and what was not measured.
pub(crate) fn band_sentence(b: &crate::money::band::BandEdge) -> String {
    let errors: Vec<String> = b
        .configurations
        .iter()
        .filter_map(|c| {
            let (ttft, tpot) = (c.ttft_error?, c.tpot_error?);
            let after = c
                .replicas_at_edge
                .map_or("cannot keep the limits".to_string(), |r| {
                    format!("{} -> {r} replicas", c.replicas)
                });
            let basis = c
                .error_basis
                .as_ref()
                .map_or(String::new(), |b| format!(" (of {b})"));
            Some(format!(
                "{} {}: TTFT +{:.0}%, TPOT +{:.0}%{basis}, {after}",
                c.tier,
                c.config,
                ttft * 100.0,
                tpot * 100.0
            ))
        })
        .collect();
    if errors.is_empty() {
        return format!(
            "not known: no run measured the latency model's error on what the plan runs ({})",
            b.not_measured.join(", ")
        );
    }
    let measured = format!(
        "steps slower by their measured error ({})",
        errors.join("; ")
    );
    let not_measured = if b.not_measured.is_empty() {
        String::new()
    } else {
        format!(
            "; not measured (kept as the figures say): {}",
            b.not_measured.join(", ")
        )
    };
    format!(
        "at the pessimistic edge of the latency model's measured error, reserve {} for {} USD over the horizon ({:+.1}% on the plan): {measured}{not_measured}; priced by the MILP on the slower figures, not replayed",
        super::sentences::gpu_counts(&b.reserved, "nothing"),
        usd(b.total_cost_usd),
        b.vs_plan * 100.0
    )
}

/// The seed line: the band over the seeds solved, or the one seed.
pub(crate) fn seed_sentence(p: &Purchase) -> String {
    let Some(b) = &p.seed_band else {
        let band = "simulation.seed_band = 4 solves with four more of both and states the band";
        return if p.seed == p.capacity_seed {
            format!(
                "{}: the capacity figures and the replays that sized the plan and checked it are simulations of this seed (simulation.capacity_seed sizes, simulation.seed checks: set the latter apart to check the plan on another draw of the traffic); {band}",
                p.seed
            )
        } else {
            format!(
                "{}: the replay that checked the plan is a simulation of this seed; the plan was sized on the capacity figures and replays of capacity seed {} (simulation.capacity_seed), so that the purchase does not move with the replay's seed; {band}",
                p.seed, p.capacity_seed
            )
        };
    };
    let first = b.runs.first().map_or(p.seed, |r| r.seed);
    let last = b.runs.last().map_or(p.seed, |r| r.seed);
    let reserved =
        |r: &crate::money::purchase::SeedRun| super::sentences::gpu_counts(&r.reserved, "nothing");
    let reservation = if b.same_reservation {
        format!(
            "every seed reserves {}",
            b.runs.first().map(reserved).unwrap_or_default()
        )
    } else {
        let each: Vec<String> = b
            .runs
            .iter()
            .map(|r| format!("seed {} {}", r.seed, reserved(r)))
            .collect();
        format!("the reservation moves with the seed: {}", each.join(", "))
    };
    let term = b.term_spread.map_or(String::new(), |t| {
        format!(", over the term {:.1}%", t * 100.0)
    });
    let meeting = b.runs.iter().filter(|r| r.meets_targets).count();
    let missing = if meeting == b.runs.len() {
        String::new()
    } else {
        format!("; {meeting} of {} meet every target", b.runs.len())
    };
    let common = b.common.as_ref().map_or(String::new(), |c| {
        format!(
            "; the one reservation cheapest over every seed's plan is {} (each seed re-planned with it costs at most {:+.2}% more than with its own reservation, {})",
            super::sentences::gpu_counts(&c.reserved, "nothing"),
            c.worst_vs_own.max(0.0) * 100.0,
            c.basis
        )
    });
    let streams = if p.seed == p.capacity_seed {
        String::new()
    } else {
        let cfirst = b.runs.first().map_or(p.capacity_seed, |r| r.capacity_seed);
        let clast = b.runs.last().map_or(p.capacity_seed, |r| r.capacity_seed);
        format!(" (capacity seeds {cfirst}-{clast})")
    };
    format!(
        "{first}-{last}{streams}, each a replay and capacity figures drawn anew: {}-{} USD over the horizon ({:.1}% apart{term}); {reservation}{missing}{common}",
        usd(b.usd_min),
        usd(b.usd_max),
        b.spread * 100.0
    )
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

/// The check of a plan sized on the design seed's replays on the replay's
/// own seed: met, or where it missed and that the plan was sized again.
pub(crate) fn design_check_sentence(c: &crate::solve::outcome::DesignCheck) -> String {
    if c.met {
        return format!(
            "the plan sized on capacity seed {}'s replays meets every target, in every window, on seed {}'s replay",
            c.design_seed, c.seed
        );
    }
    let misses: Vec<String> = c
        .missed
        .iter()
        .map(|m| match &m.worst_window {
            Some(w) => format!(
                "{} {:.2}% in slots {}-{}",
                m.tier,
                w.attainment * 100.0,
                w.start_slot,
                w.end_slot.saturating_sub(1)
            ),
            None => format!("{} {:.2}%", m.tier, m.attainment * 100.0),
        })
        .collect();
    format!(
        "the plan sized on capacity seed {}'s replays ({} USD over the horizon) missed on seed {}'s replay ({}), so the plan above was sized again on seed {}'s replays",
        c.design_seed,
        usd(c.design_total_cost_usd),
        c.seed,
        misses.join(", "),
        c.seed
    )
}

/// The "PURCHASE" block, tiers in `tier_order`.
/// The term's cost, with its years and average year when the term was
/// projected (growth or renewals): "36 months: … USD (year 1 …; … a year on
/// average)".
pub(crate) fn term_sentence(p: &Purchase) -> Option<String> {
    let (m, t) = (p.term_months?, p.term_usd?);
    let years: Vec<String> = p
        .term_years
        .iter()
        .map(|y| {
            let short = if y.months < 12 {
                format!(
                    " ({} {})",
                    y.months,
                    if y.months == 1 { "month" } else { "months" }
                )
            } else {
                String::new()
            };
            format!("year {} {}{short}", y.year, usd(y.usd))
        })
        .collect();
    Some(match p.term_usd_per_year {
        Some(average) if !years.is_empty() => format!(
            "{m} months: {} USD ({}; {} USD a year on average)",
            usd(t),
            years.join(", "),
            usd(average)
        ),
        _ => format!("{m} months: {} USD", usd(t)),
    })
}

pub(crate) fn render(
    p: &Purchase,
    design_check: Option<&crate::solve::outcome::DesignCheck>,
    tier_order: &[String],
    horizon_hours: f64,
) -> String {
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
            "  {:<10} {}",
            if i == 0 { "rent" } else { "" },
            rent_sentence(r)
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
        "  per year   {} USD: reserved {}, rented {}{}, API {}",
        usd(p.usd_per_year),
        usd(p.reserved_usd_per_year),
        usd(p.rented_usd_per_year),
        p.spot_part(usd),
        usd(p.api_usd_per_year)
    );
    if let Some(term) = term_sentence(p) {
        let _ = writeln!(o, "  term       {term}");
    }
    for (i, name) in tier_order.iter().enumerate() {
        let Some(d) = p.deployment.get(name) else {
            continue;
        };
        let parts: Vec<String> = d
            .iter()
            .map(|c| {
                let (unit, replicas) = match c.disaggregated {
                    Some(r) => (
                        format!(
                            " in {} units ({} prefill and {} decode replica{} each, KV cache moved between them)",
                            r.label(),
                            r.prefill,
                            r.decode,
                            if r.decode == 1 { "" } else { "s" }
                        ),
                        if c.max_replicas == 1 { "unit" } else { "units" },
                    ),
                    None => (
                        String::new(),
                        if c.max_replicas == 1 { "replica" } else { "replicas" },
                    ),
                };
                format!(
                    "{} {}{unit} on {}{}, batch cap {}, chunks of {} tokens, {}, {:.1}% of its requests (up to {} {replicas})",
                    c.gpu_type,
                    crate::perf::Layout {
                        tp: c.tensor_parallel,
                        ep: c.expert_parallel,
                        attention_dp: c.attention_dp,
                    }
                    .label()
                    .to_uppercase(),
                    c.engine,
                    c.speculative
                        .as_ref()
                        .map_or(String::new(), |m| format!(" with {m} speculative decoding")),
                    c.max_batch,
                    c.max_batched_tokens,
                    c.precision.to_uppercase(),
                    c.share * 100.0,
                    c.max_replicas,
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
    if let Some(pool) = &p.pool {
        super::pool_text::render(&mut o, pool);
    }
    if let Some(c) = caution(p) {
        let _ = writeln!(
            o,
            "  caution    {c}: a benchmark run of one replica (HOW TO RUN AND CHECK) before signing is the check"
        );
    }
    if let Some(b) = &p.band_edge {
        let _ = writeln!(o, "  band       {}", band_sentence(b));
    }
    if let (Some(why), false) = (&p.levels_not_priced, p.reserve.is_empty()) {
        let _ = writeln!(o, "  levels     not priced: {why}");
    }
    for (i, l) in p.reservation_levels.iter().enumerate() {
        let _ = writeln!(
            o,
            "  {:<10} {}",
            if i == 0 { "levels" } else { "" },
            levels_sentence(l)
        );
    }
    let _ = writeln!(
        o,
        "  {:<10} {}",
        if p.seed_band.is_some() {
            "seeds"
        } else {
            "seed"
        },
        seed_sentence(p)
    );
    if let Some(c) = design_check {
        let _ = writeln!(o, "  {:<10} {}", "checked", design_check_sentence(c));
    }
    o
}
