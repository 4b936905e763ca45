//! The term's cost with demand growth, as text (`[commitment]
//! monthly_growth`, [`crate::money::growth`]).

use super::usd;
use crate::money::growth::TermProjection;
use crate::solve::Outcome;
use std::fmt::Write as _;

/// The solver line when the MILP was solved over the term.
pub fn solver_line(t: &TermProjection, method: &str) -> String {
    let how = match (t.stages.len(), t.monthly_growth == 0.0) {
        (0 | 1, _) => " with growth".to_string(),
        (n, true) => format!(" in {n} reservations"),
        (n, false) => format!(" in {n} reservations, with growth"),
    };
    format!(
        "  {method} method over the {}-month term{how}: proven within {}% of the optimum (no plan for the term costs less than {} USD)",
        t.months,
        // Rounded toward what is proven: the gap up, the bound down.
        super::gap_percent_up(t.proven_gap),
        usd(t.lower_bound_usd.floor()),
    )
}

/// The projection as a header and rows, one per period and one for the
/// whole term (the spot column only when something is spent on spot).
pub fn rows(t: &TermProjection) -> (Vec<String>, Vec<Vec<String>>) {
    let spot = t.spot_usd > 0.0;
    let mut header: Vec<String> = ["months", "demand ×", "reserved", "on demand", "API"]
        .map(String::from)
        .to_vec();
    if spot {
        header.push("spot".into());
    }
    header.push("USD per month".into());
    // A row: its label, its demand factor, then the money columns.
    let row = |label: String, factor: String, money: [f64; 5]| -> Vec<String> {
        let [reserved, on_demand, api, spot_usd, total] = money;
        let mut cells = vec![label, factor, usd(reserved), usd(on_demand), usd(api)];
        if spot {
            cells.push(usd(spot_usd));
        }
        cells.push(usd(total));
        cells
    };
    let mut rows: Vec<Vec<String>> = t
        .periods
        .iter()
        .map(|p| {
            let first = p.period.first_month;
            let months = if p.period.months == 1 {
                first.to_string()
            } else {
                format!("{first}-{}", first + p.period.months - 1)
            };
            row(
                months,
                format!("{:.3}", p.period.peak_factor),
                [
                    p.reserved_usd_per_month,
                    p.on_demand_usd_per_month,
                    p.api_usd_per_month,
                    p.spot_usd_per_month,
                    p.usd_per_month,
                ],
            )
        })
        .collect();
    rows.push(row(
        "whole term".into(),
        String::new(),
        [
            t.reserved_usd,
            t.on_demand_usd,
            t.api_usd,
            t.spot_usd,
            t.total_usd,
        ],
    ));
    (header, rows)
}

/// The term's cost year by year, as a header and rows (one per year, then
/// the average year).
pub fn year_rows(t: &TermProjection) -> (Vec<String>, Vec<Vec<String>>) {
    let spot = t.spot_usd > 0.0;
    let mut header: Vec<String> = ["year", "months", "reserved", "on demand", "API"]
        .map(String::from)
        .to_vec();
    if spot {
        header.push("spot".into());
    }
    header.push("USD".into());
    let mut rows: Vec<Vec<String>> = t
        .years
        .iter()
        .map(|y| {
            let mut cells = vec![
                format!("year {}", y.year),
                y.months.to_string(),
                usd(y.reserved_usd),
                usd(y.on_demand_usd),
                usd(y.api_usd),
            ];
            if spot {
                cells.push(usd(y.spot_usd));
            }
            cells.push(usd(y.usd));
            cells
        })
        .collect();
    let mut average = vec!["average year".to_string(), "12".into()];
    average.extend(std::iter::repeat_n(String::new(), header.len() - 3));
    average.push(usd(t.average_usd_per_year));
    rows.push(average);
    (header, rows)
}

/// What each reservation period reserves, and where one is renewed larger,
/// smaller or let lapse; empty without renewals.
fn stage_notes(t: &TermProjection) -> Vec<String> {
    let counts = |r: &std::collections::BTreeMap<String, u32>| -> String {
        let held: Vec<String> = r
            .iter()
            .filter(|(_, &n)| n > 0)
            .map(|(g, n)| format!("{n} {g}"))
            .collect();
        if held.is_empty() {
            "nothing".into()
        } else {
            held.join(", ")
        }
    };
    let mut notes = Vec::new();
    let mut before: Option<&std::collections::BTreeMap<String, u32>> = None;
    let full = t.stages.first().map_or(0, |s| s.months);
    for s in &t.stages {
        let months = if s.months == 1 {
            format!("month {}", s.first_month)
        } else {
            format!("months {}-{}", s.first_month, s.first_month + s.months - 1)
        };
        let held: u32 = s.reserved.values().sum();
        let change = match before {
            // Nothing held before: a new reservation, or none.
            None => "reserve",
            Some(b) if b.values().all(|&n| n == 0) => "reserve",
            Some(b) if b == &s.reserved => "renew",
            Some(b) => {
                let was: u32 = b.values().sum();
                if held == 0 {
                    "let every reservation lapse:"
                } else if held > was {
                    "renew larger:"
                } else if held < was {
                    "renew smaller:"
                } else {
                    "renew changed:"
                }
            }
        };
        let prices = if held > 0 && (s.price_factor - 1.0).abs() > 1e-12 {
            format!(" at {:.1}% of the list prices", s.price_factor * 100.0)
        } else {
            String::new()
        };
        let tail = match (held, s.months < full) {
            (0, true) => format!(
                "; these months run on demand (and the API where allowed): a reservation bought for {} months would be paid for at least {}",
                s.months, full
            ),
            (0, false) => "; these months run on demand (and the API where allowed)".into(),
            _ => String::new(),
        };
        notes.push(format!(
            "{months}: {change} {}{prices}, {} USD{tail}",
            counts(&s.reserved),
            usd(s.usd)
        ));
        before = Some(&s.reserved);
    }
    notes
}

/// What the notes under the projection say, one sentence each.
pub fn notes(t: &TermProjection) -> Vec<String> {
    let mut notes = stage_notes(t);
    if let Some(r) = &t.renewal {
        let (cheaper, dearer) = if r.renewed {
            (r.renewed_usd, r.held_usd)
        } else {
            (r.held_usd, r.renewed_usd)
        };
        let saving = 1.0 - cheaper / dearer;
        let verdict = if saving < 5e-4 {
            format!(
                "the two cost the same; {} is the plan",
                if r.renewed {
                    "renewing"
                } else {
                    "holding one reservation"
                }
            )
        } else {
            format!(
                "{} is the plan ({:.1}% less)",
                if r.renewed {
                    "renewing"
                } else {
                    "holding one reservation"
                },
                saving * 100.0
            )
        };
        notes.push(format!(
            "renewing at each renewal costs {} USD over the term, one reservation held for all {} months {} USD: {verdict}",
            usd(r.renewed_usd),
            t.months,
            usd(r.held_usd),
        ));
    }
    if t.periods.iter().any(|p| p.period.months > 1) {
        notes.push("months are grouped so the term's MILP fits its slot limit: a group is covered at its busiest month's demand (× shown) and pays its months' mean volume to the API".to_string());
    }
    if let Some(h) = &t.horizon_only {
        let reserved: Vec<String> = h
            .reserved
            .iter()
            .filter(|(_, &n)| n > 0)
            .map(|(g, n)| format!("{n} {g}"))
            .collect();
        let reserved = if reserved.is_empty() {
            "nothing".to_string()
        } else {
            reserved.join(", ")
        };
        notes.push(format!(
            "the horizon alone would reserve {reserved}; its cheapest plan on the same capacity figures costs {} USD over the horizon (priced by the MILP, not replayed)",
            usd(h.horizon_usd)
        ));
        if h.same_reservations {
            notes.push("the growth does not change what to reserve: the term's reservations are the horizon's own".into());
        } else {
            notes.push(format!(
                "those reservations{} would cost {} USD over the term: {} USD ({:+.1}%) more than the plan's",
                if t.stages.is_empty() { "" } else { ", renewed unchanged," },
                usd(h.term_usd),
                usd(h.term_usd - t.total_usd),
                (h.term_usd / t.total_usd - 1.0) * 100.0
            ));
        }
    }
    let lowered: Vec<String> = t
        .factors
        .iter()
        .filter(|(_, f)| f.months < f.rounds * (1.0 - 1e-3))
        .map(|(tier, f)| format!("{tier} ×{:.3} (rounds ×{:.3})", f.months, f.rounds))
        .collect();
    if !lowered.is_empty() && t.monthly_growth != 0.0 {
        notes.push(format!(
            "the grown months are sized at each tier's lowest factor that still gives the horizon's plan, {}: the replay checked the horizon's fleets, and the rest of a factor is where the rounds' last step happened to land",
            lowered.join(", ")
        ));
    }
    notes.push(
        "the horizon's plan is month 1 with the term's reservations; only it is replayed".into(),
    );
    notes
}

/// A monthly growth as a signed percentage, with the digits a small one
/// needs (+3.0, −0.25, +0.0001).
fn percent_a_month(growth: f64) -> String {
    let percent = growth * 100.0;
    let digits = if percent.abs() >= 0.1 {
        1
    } else {
        (-percent.abs().log10()).ceil() as usize + 1
    };
    format!("{percent:+.digits$}")
}

/// The section's title.
pub fn title(t: &TermProjection) -> String {
    let Some(every) = t.stages.first().map(|s| s.months) else {
        if t.monthly_growth == 0.0 {
            return format!(
                "TERM ({} months; the planned pattern repeated, one reservation held for the whole term)",
                t.months
            );
        }
        return format!(
            "TERM WITH GROWTH ({} months, demand {}% a month; the planned pattern repeated, reservations chosen for the whole term)",
            t.months,
            percent_a_month(t.monthly_growth)
        );
    };
    let decline = t
        .stages
        .get(1)
        .map(|s| 1.0 - s.price_factor.powf(12.0 / f64::from(every)))
        .filter(|d| *d > 1e-9)
        .map_or_else(String::new, |d| {
            format!(", GPU prices {:.1}% lower each year", d * 100.0)
        });
    let growth = if t.monthly_growth == 0.0 {
        String::new()
    } else {
        format!(", demand {}% a month", percent_a_month(t.monthly_growth))
    };
    format!(
        "TERM IN RESERVATIONS ({} months in reservations of {every} {}{growth}{decline}; the planned pattern repeated, reservations chosen at each renewal)",
        t.months,
        if every == 1 { "month" } else { "months" },
    )
}

/// The TERM WITH GROWTH section: the term's cost month by month.
pub fn section(o: &mut String, outcome: &Outcome) {
    let Some(t) = &outcome.commitment.growth else {
        return;
    };
    let _ = writeln!(o, "{}", title(t));
    print_table(o, &rows(t));
    let _ = writeln!(o, "  by year:");
    print_table(o, &year_rows(t));
    for note in notes(t) {
        let _ = writeln!(o, "  {note}");
    }
    let _ = writeln!(o);
}

/// A header and rows as fixed-width text.
fn print_table(o: &mut String, (header, rows): &(Vec<String>, Vec<Vec<String>>)) {
    for row in std::iter::once(header).chain(rows) {
        let _ = write!(o, "  {:<12}", row[0]);
        for cell in &row[1..] {
            let _ = write!(o, " {cell:>13}");
        }
        let _ = writeln!(o);
    }
}
