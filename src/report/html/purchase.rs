//! The plan page's opening section: the purchase (reserve, rent, API, per
//! year, term), the deployment per tier, the FP8 caveat, the seed and the
//! price sources ([`crate::money::purchase`]).

use super::svg::esc;
use crate::base::numbers::usd;
use crate::solve::Outcome;
use std::fmt::Write as _;

/// The "What to sign for" section.
pub(crate) fn section(outcome: &Outcome) -> String {
    let p = &outcome.purchase;
    let mut s = String::from("<section><h2>What to sign for</h2><table><tbody>");
    let row = |s: &mut String, label: &str, text: &str| {
        let _ = write!(
            s,
            "<tr><th style=\"text-align:left;white-space:nowrap\">{}</th><td style=\"text-align:left;white-space:normal\">{}</td></tr>",
            esc(label),
            esc(text)
        );
    };
    if p.reserve.is_empty() {
        row(&mut s, "Reserve", "nothing");
    }
    for r in &p.reserve {
        row(
            &mut s,
            "Reserve",
            &crate::report::purchase_text::reserve_sentence(r),
        );
    }
    if p.rent.is_empty() {
        row(&mut s, "Rent", "nothing on demand");
    }
    for r in &p.rent {
        row(
            &mut s,
            "Rent",
            &crate::report::purchase_text::rent_sentence(r),
        );
    }
    row(
        &mut s,
        "API",
        &if p.api_share > 0.0 {
            format!(
                "{:.1}% of requests, {} USD over the horizon",
                p.api_share * 100.0,
                usd(p.api_usd)
            )
        } else {
            "nothing".into()
        },
    );
    row(
        &mut s,
        "Per year",
        &format!(
            "{} USD (reserved {}, rented {}{}, API {}; the horizon's pattern repeated)",
            usd(p.usd_per_year),
            usd(p.reserved_usd_per_year),
            usd(p.rented_usd_per_year),
            p.spot_part(usd),
            usd(p.api_usd_per_year)
        ),
    );
    if let Some(term) = crate::report::purchase_text::term_sentence(p) {
        row(&mut s, "Term", &term);
    }
    s.push_str("</tbody></table>");
    s.push_str("<table><thead><tr><th>tier</th><th>GPU</th><th>TP</th><th>engine</th><th>batch cap</th><th>chunk (tokens)</th><th>precision</th><th>share</th><th>most replicas</th><th>configuration</th></tr></thead><tbody>");
    let mut fp8 = false;
    let mut fp4 = false;
    for name in &outcome.tier_order {
        let Some(d) = p.deployment.get(name) else {
            continue;
        };
        for c in d {
            fp8 |= c.precision == "fp8";
            fp4 |= c.precision == "fp4";
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}%</td><td>{}</td><td><code>{}</code></td></tr>",
                esc(name),
                esc(&c.gpu_type),
                layout_cell(c),
                esc(&c.engine),
                c.max_batch,
                c.max_batched_tokens,
                c.precision.to_uppercase(),
                c.share * 100.0,
                c.max_replicas,
                esc(&c.config)
            );
        }
    }
    s.push_str("</tbody></table>");
    if let Some(c) = crate::report::purchase_text::caution(p) {
        let _ = write!(
            s,
            "<p class=\"warn\">{}: a benchmark run of one replica (the plan's launch and <code>vllm bench serve</code> commands) before signing is the check.</p>",
            esc(&c)
        );
    }
    if fp4 {
        let _ = write!(
            s,
            "<p class=\"warn\">{}.</p>",
            esc(crate::report::sentences::FP4_QUALITY)
        );
    }
    if fp8 {
        s.push_str("<p class=\"warn\">FP8 weights change the answers (usually slightly): whether that quality is acceptable is yours to decide; <code>model.precision = \"bf16\"</code> rules FP8 out.</p>");
    }
    if let Some(b) = &p.band_edge {
        let _ = write!(
            s,
            "<p class=\"warn\">Confidence band: {}.</p>",
            esc(&crate::report::purchase_text::band_sentence(b))
        );
    }
    if let (Some(why), false) = (&p.levels_not_priced, p.reserve.is_empty()) {
        let _ = write!(s, "<p>Reservation levels not priced: {}.</p>", esc(why));
    }
    for l in &p.reservation_levels {
        let _ = write!(
            s,
            "<p>Reservation: {}.</p>",
            esc(&crate::report::purchase_text::levels_sentence(l))
        );
    }
    let _ = write!(
        s,
        "<p>Seed{} {}.</p>",
        if p.seed_band.is_some() { "s" } else { "" },
        esc(&crate::report::purchase_text::seed_sentence(p))
    );
    if let Some(c) = &outcome.design_check {
        let _ = write!(
            s,
            "<p>Checked: {}.</p>",
            esc(&crate::report::purchase_text::design_check_sentence(c))
        );
    }
    s.push_str("<p>Prices (the scenario's, not live quotes):</p><ul>");
    for (gpu, price) in &outcome.prices.gpus {
        if !p.reserve.iter().any(|r| &r.gpu_type == gpu)
            && !p.rent.iter().any(|r| &r.gpu_type == gpu)
        {
            continue;
        }
        let _ = write!(
            s,
            "<li>{}: reserved {} USD/GPU-h ({}), on demand {} USD/GPU-h; {}</li>",
            esc(gpu),
            price
                .reserved_usd_per_gpu_hour
                .map_or("—".into(), |x| format!("{x:.3}")),
            esc(&price.reserved_term),
            price
                .on_demand_usd_per_gpu_hour
                .map_or("—".into(), |x| format!("{x:.3}")),
            esc(&price.source)
        );
    }
    for (model, api) in outcome.prices.apis() {
        let _ = write!(
            s,
            "<li>API {}{}: {} / {} USD per 1M input / output tokens; {}</li>",
            model.map_or(String::new(), |m| format!("for {} ", esc(m))),
            esc(&api.name),
            api.usd_per_million_input_tokens,
            api.usd_per_million_output_tokens,
            esc(&api.price_source)
        );
    }
    s.push_str("</ul></section>");
    s
}

/// The deployment table's TP cell: the degree, and a mixture's expert
/// parallelism and data-parallel attention beside it.
fn layout_cell(c: &crate::money::purchase::Deployment) -> String {
    let mut cell = c.tensor_parallel.to_string();
    if c.attention_dp > 1 {
        let _ = write!(cell, ", attention-DP {}", c.attention_dp);
    }
    if c.expert_parallel > 1 {
        let _ = write!(cell, ", EP {}", c.expert_parallel);
    }
    cell
}
