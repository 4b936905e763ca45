//! The term's cost with demand growth, as text (`[commitment]
//! monthly_growth`, [`crate::money::growth`]).

use super::usd;
use crate::money::growth::TermProjection;
use crate::solve::Outcome;
use std::fmt::Write as _;

/// The solver line when the MILP was solved over the term.
pub fn solver_line(t: &TermProjection, method: &str) -> String {
    format!(
        "  {method} method over the {}-month term with growth: proven within {}% of the optimum (no plan for the term costs less than {} USD)",
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

/// What the notes under the projection say, one sentence each.
pub fn notes(t: &TermProjection) -> Vec<String> {
    let mut notes = Vec::new();
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
                "those reservations would cost {} USD over the term: {} USD ({:+.1}%) more than reserving for the growth",
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
    if !lowered.is_empty() {
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
    format!(
        "TERM WITH GROWTH ({} months, demand {}% a month; the planned pattern repeated, reservations chosen for the whole term)",
        t.months,
        percent_a_month(t.monthly_growth)
    )
}

/// The TERM WITH GROWTH section: the term's cost month by month.
pub fn section(o: &mut String, outcome: &Outcome) {
    let Some(t) = &outcome.commitment.growth else {
        return;
    };
    let _ = writeln!(o, "{}", title(t));
    let (header, rows) = rows(t);
    let _ = write!(o, "  {:<12}", header[0]);
    for h in &header[1..] {
        let _ = write!(o, " {h:>13}");
    }
    let _ = writeln!(o);
    for row in &rows {
        let _ = write!(o, "  {:<12}", row[0]);
        for cell in &row[1..] {
            let _ = write!(o, " {cell:>13}");
        }
        let _ = writeln!(o);
    }
    for note in notes(t) {
        let _ = writeln!(o, "  {note}");
    }
    let _ = writeln!(o);
}
