//! `planner solve` and the commitment: reservations bought in whole units and
//! filled by deadline tiers, reserved offers of several terms, a term over
//! which demand grows, and reservations on a horizon shorter than a day.

use crate::{check_shipped, json, planner, stderr, stdout, temp_dir};

/// Whole units of `unit` GPUs in every slot, and every rise of the rented
/// count still held `hold` slots later (or to the end of the horizon).
fn bought_in_units_and_held(plan: &serde_json::Value, gpu: &str, unit: f64, hold: usize) {
    assert_eq!(plan["reserved"][gpu].as_f64().unwrap() % unit, 0.0);
    let rented: Vec<f64> = plan["on_demand"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s[gpu].as_f64().unwrap_or(0.0))
        .collect();
    for (t, &n) in rented.iter().enumerate() {
        assert_eq!(n % unit, 0.0, "slot {t}: {n} {gpu} GPUs");
        let before = if t == 0 { 0.0 } else { rented[t - 1] };
        for later in &rented[t..(t + hold).min(rented.len())] {
            assert!(*later >= n - before, "slot {t}: {rented:?}");
        }
    }
}

#[test]
fn a_deadline_tier_fills_idle_reserved_gpus_and_cuts_the_cost() {
    let plan = check_shipped("scenarios/overnight-deadline.toml");
    let idle = &plan["idle_reserved"];
    let (with, without) = (
        idle["gpu_hours"].as_f64().unwrap(),
        idle["gpu_hours_without_deadline_tiers"].as_f64().unwrap(),
    );
    assert!(with < without, "{idle}");
    let bulk = &plan["verification"]["tiers"]["bulk"];
    assert_eq!(bulk["meets_target"], true, "{bulk}");
    assert_eq!(bulk["late_requests"], 0, "{bulk}");
    assert_eq!(plan["slo"]["bulk"]["deadline_hours"], 8.0);
    // The 12-month term: a year's commitment, and the reserved GPU-hours the
    // plan leaves idle are the share of them it does not occupy.
    let term = &plan["commitment"]["term"];
    assert_eq!(term["months"], 12);
    assert_eq!(term["usd"], plan["commitment"]["usd_per_year"]);
    let reserved = plan["reserved"]["l4"].as_f64().unwrap();
    assert_eq!(
        term["reserved_gpu_hours"].as_f64().unwrap(),
        reserved * 8760.0
    );
    let idle_share = with / (reserved * plan["horizon_hours"].as_f64().unwrap());
    assert!(
        (term["occupied_share"].as_f64().unwrap() - (1.0 - idle_share)).abs() < 1e-9,
        "{term} vs idle {with}"
    );
    bought_in_units_and_held(&plan, "l4", 4.0, 4);
    // The same scenario with the bulk tier served on arrival.
    let root = env!("CARGO_MANIFEST_DIR");
    let text = std::fs::read_to_string("scenarios/overnight-deadline.toml")
        .unwrap()
        .replace("deadline_hours = 8\n", "")
        .replace("[commitment]\nterm_months = 12\n", "")
        .replace("\"../", &format!("\"{root}/scenarios/../"))
        .replacen(
            "[model]",
            &format!("profiles_dir = \"{root}/profiles\"\n\n[model]"),
            1,
        );
    let dir = temp_dir("urgent");
    let urgent_file = dir.join("urgent.toml");
    std::fs::write(&urgent_file, text).unwrap();
    let urgent = check_shipped(urgent_file.to_str().unwrap());
    std::fs::remove_dir_all(dir).unwrap();
    assert!(urgent.get("idle_reserved").is_none());
    assert!(urgent["verification"]["tiers"]["bulk"]
        .get("late_requests")
        .is_none());
    let cost = |p: &serde_json::Value| p["total_cost_usd"].as_f64().unwrap();
    assert!(
        cost(&plan) < 0.8 * cost(&urgent),
        "{} vs {}",
        cost(&plan),
        cost(&urgent)
    );
    // Served on arrival it buys whole nodes, any rented for at least two
    // hours, and still meets its targets.
    bought_in_units_and_held(&urgent, "l4", 4.0, 4);
    assert_eq!(urgent["missed_targets"].as_array().map_or(0, Vec::len), 0);
}

/// `scenarios/overnight-deadline.toml` with its L4s offered reserved for
/// 12 months at the scenario's price and for 36 months at
/// `three_year_usd_per_gpu_hour`, under a commitment term of `term_months`.
fn with_l4_offers(three_year_usd_per_gpu_hour: f64, term_months: u32) -> serde_json::Value {
    let root = env!("CARGO_MANIFEST_DIR");
    let single = "reserved_usd_per_gpu_hour = 0.29\nreserved_term = \"1-year commitment (assumed 35% below on-demand)\"\n";
    let text = std::fs::read_to_string("scenarios/overnight-deadline.toml").unwrap();
    assert!(text.contains(single));
    let text = text
        .replacen(
            single,
            &format!("reserved_offers = [{{ term_months = 12, usd_per_gpu_hour = 0.29 }}, {{ term_months = 36, usd_per_gpu_hour = {three_year_usd_per_gpu_hour} }}]\n"),
            1,
        )
        .replace(
            "[commitment]\nterm_months = 12\n",
            &format!("[commitment]\nterm_months = {term_months}\n"),
        )
        .replace("\"../", &format!("\"{root}/scenarios/../"))
        .replacen(
            "[model]",
            &format!("profiles_dir = \"{root}/profiles\"\n\n[model]"),
            1,
        );
    let dir = temp_dir(&format!(
        "offers-{three_year_usd_per_gpu_hour}-{term_months}"
    ));
    let file = dir.join("offers.toml");
    std::fs::write(&file, text).unwrap();
    let plan = check_shipped(file.to_str().unwrap());
    std::fs::remove_dir_all(dir).unwrap();
    plan
}

#[test]
fn the_reserved_offer_cheapest_over_the_term_is_bought_and_paid_for_its_whole_term() {
    let single = check_shipped("scenarios/overnight-deadline.toml");
    let cost = |p: &serde_json::Value| p["total_cost_usd"].as_f64().unwrap();
    let line = |p: &serde_json::Value| p["commitment"]["gpu_types"]["l4"].clone();
    // Over a 12-month term a 36-month offer at 0.20 costs 0.60 per hour of
    // the term: the 12-month offer is bought, and the plan is the one the
    // single price gives.
    let year = with_l4_offers(0.20, 12);
    assert_eq!(
        year["prices"]["gpus"]["l4"]["reserved_offer"]["term_months"],
        12
    );
    assert_eq!(line(&year)["offer_term_months"], 12);
    assert_eq!(cost(&year), cost(&single));
    assert_eq!(year["reserved"], single["reserved"]);
    // Over 36 months the 36-month offer is bought at its list price.
    let three = with_l4_offers(0.20, 36);
    assert_eq!(line(&three)["offer_term_months"], 36);
    assert_eq!(line(&three)["reserved_usd_per_gpu_hour"], 0.2);
    assert!(cost(&three) < cost(&single));
    let per_year = three["commitment"]["usd_per_year"].as_f64().unwrap();
    let term = three["commitment"]["term"]["usd"].as_f64().unwrap();
    assert!((term - 3.0 * per_year).abs() < 1e-6, "{term} vs {per_year}");
    // Over 12 months a 36-month offer at 0.09 (0.27 per hour of the term)
    // beats 0.29: it is bought, the horizon is charged 0.27, and the term's
    // commitment is all 36 months of it.
    let cheap = with_l4_offers(0.09, 12);
    let offer = &cheap["prices"]["gpus"]["l4"]["reserved_offer"];
    assert_eq!(offer["term_months"], 36);
    assert!((offer["effective_usd_per_gpu_hour"].as_f64().unwrap() - 0.27).abs() < 1e-12);
    assert_eq!(line(&cheap)["reserved_usd_per_gpu_hour"], 0.09);
    let gpus = line(&cheap)["gpus"].as_f64().unwrap();
    let term = cheap["commitment"]["term"]["usd"].as_f64().unwrap();
    assert!((term - gpus * 0.09 * 8760.0 * 3.0).abs() < 1e-6, "{term}");
    // ... and buys 36 months of GPU-hours, not the term's 12.
    let hours = cheap["commitment"]["term"]["reserved_gpu_hours"]
        .as_f64()
        .unwrap();
    assert!((hours - gpus * 36.0 * 730.0).abs() < 1e-6, "{hours}");
    assert!(cost(&cheap) < cost(&single));
}

#[test]
fn both_milp_methods_buy_under_the_reserved_offer_cheapest_over_the_term() {
    let single = "reserved_usd_per_gpu_hour = 1.94\nreserved_term = \"1-year commitment (assumed 35% below on-demand)\"\n";
    let text = std::fs::read_to_string("scenarios/api-vs-reserved.toml").unwrap();
    assert!(text.contains(single));
    // 1.30 × 36 / 36 = 1.30 beats 1.94 over 36 months.
    let text = text.replacen(
        single,
        "reserved_offers = [{ term_months = 12, usd_per_gpu_hour = 1.94 }, { term_months = 36, usd_per_gpu_hour = 1.30 }]\n",
        1,
    ) + "\n[commitment]\nterm_months = 36\n";
    let root = env!("CARGO_MANIFEST_DIR");
    let text = text
        .replace("\"../", &format!("\"{root}/scenarios/../"))
        .replacen(
            "[model]",
            &format!("profiles_dir = \"{root}/profiles\"\n\n[model]"),
            1,
        );
    let dir = temp_dir("offers-methods");
    let file = dir.join("offers.toml");
    std::fs::write(&file, text).unwrap();
    let solve = |method: &str| {
        json(&planner(&[
            "solve",
            file.to_str().unwrap(),
            "--format",
            "json",
            "--quiet",
            "--set",
            &format!("planning.milp_method={method}"),
        ]))
    };
    let (mono, deco) = (solve("monolithic"), solve("decomposed"));
    std::fs::remove_dir_all(dir).unwrap();
    let cost = |p: &serde_json::Value| p["total_cost_usd"].as_f64().unwrap();
    for (plan, method) in [(&mono, "monolithic"), (&deco, "decomposed")] {
        assert_eq!(plan["solver"]["method"], method);
        let offer = &plan["prices"]["gpus"]["h100-sxm"]["reserved_offer"];
        assert_eq!(offer["term_months"], 36, "{offer}");
        assert_eq!(
            plan["prices"]["gpus"]["h100-sxm"]["reserved_usd_per_gpu_hour"],
            1.3
        );
    }
    assert!(
        (cost(&mono) - cost(&deco)).abs() <= 0.01 * cost(&mono),
        "{} vs {}",
        cost(&mono),
        cost(&deco)
    );
}

/// `scenarios/api-vs-reserved.toml` over a 12-month term growing by
/// `growth` a month.
fn over_a_growing_term(growth: &str) -> serde_json::Value {
    json(&planner(&[
        "solve",
        "scenarios/api-vs-reserved.toml",
        "--set",
        "commitment.term_months=12",
        "--set",
        &format!("commitment.monthly_growth={growth}"),
        "--format",
        "json",
        "--quiet",
    ]))
}

#[test]
fn reservations_are_chosen_for_the_whole_term_when_demand_grows() {
    let flat = over_a_growing_term("0");
    assert!(flat["commitment"].get("growth").is_none());
    let grown = over_a_growing_term("0.15");
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    let g = &grown["commitment"]["growth"];
    let periods = g["periods"].as_array().unwrap();
    // Two 30-minute slots a month fit: one period per month, exact.
    assert_eq!(periods.len(), 12);
    for (m, p) in periods.iter().enumerate() {
        assert_eq!(p["first_month"], m as u64 + 1);
        assert!((f(&p["peak_factor"]) - 1.15f64.powi(m as i32)).abs() < 1e-9);
        let parts = ["reserved", "on_demand", "api", "spot"]
            .iter()
            .map(|k| f(&p[format!("{k}_usd_per_month")]))
            .sum::<f64>();
        assert!((parts - f(&p["usd_per_month"])).abs() < 1e-6, "{p}");
    }
    // The term is the months added up; the reservations are paid every hour.
    let months_total: f64 = periods.iter().map(|p| f(&p["usd_per_month"])).sum();
    assert!((months_total - f(&g["total_usd"])).abs() < 1e-6);
    let reserved = f(&grown["reserved"]["h100-sxm"]);
    assert!((f(&g["reserved_usd"]) - reserved * 1.94 * 8760.0).abs() < 1e-6);
    // Month 1 is the horizon's plan, replayed and meeting its target.
    assert!((f(&periods[0]["usd_per_month"]) - f(&grown["cost_per_month_usd"])).abs() < 1e-6);
    assert!(grown["missed_targets"].as_array().unwrap().is_empty());
    // Growing demand never costs less than the flat pattern over the term,
    // and reserving for the growth is no dearer than the horizon's own
    // reservations priced over the same term.
    let gap = f(&g["proven_gap"]);
    assert!(gap <= 0.01, "{g}");
    assert!(f(&g["total_usd"]) >= 12.0 * f(&flat["cost_per_month_usd"]) * (1.0 - 0.01));
    assert!(reserved > f(&flat["reserved"]["h100-sxm"]), "{g}");
    let alone = &g["horizon_only"];
    assert_eq!(alone["reserved"]["h100-sxm"], flat["reserved"]["h100-sxm"]);
    assert_eq!(alone["same_reservations"], false);
    assert!((f(&alone["horizon_usd"]) - f(&flat["total_cost_usd"])).abs() < 1e-6);
    // The cheaper of the two reservations over the term is the one kept.
    assert!(f(&alone["term_usd"]) >= f(&g["total_usd"]));
    // Status, bound and gap are the term's, and say so.
    assert_eq!(grown["solver"]["term_months"], 12);
    assert_eq!(
        f(&grown["solver"]["lower_bound_usd"]),
        f(&g["lower_bound_usd"])
    );
    assert!(f(&g["lower_bound_usd"]) <= f(&g["total_usd"]));
    // Text and HTML say so.
    let text = stdout(&planner(&[
        "solve",
        "scenarios/api-vs-reserved.toml",
        "--set",
        "commitment.term_months=12",
        "--set",
        "commitment.monthly_growth=0.15",
        "--quiet",
    ]));
    assert!(
        text.contains("TERM WITH GROWTH (12 months, demand +15.0% a month"),
        "{text}"
    );
    assert!(
        text.contains("over the 12-month term with growth: proven within"),
        "{text}"
    );
    assert!(text.contains("solver over the 12-month term:"), "{text}");
    // A sweep over the growth prices each variant's term.
    let csv = stdout(&planner(&[
        "sweep",
        "scenarios/api-vs-reserved.toml",
        "--set",
        "commitment.term_months=12",
        "--set",
        "commitment.monthly_growth=0,0.15",
        "--format",
        "csv",
        "--quiet",
    ]));
    let lines: Vec<&str> = csv.lines().collect();
    let column = lines[0]
        .split(',')
        .position(|h| h == "term_usd")
        .expect("term_usd");
    let term_usd = |line: &str| line.split(',').nth(column).unwrap().parse::<f64>().unwrap();
    assert!((term_usd(lines[1]) - 12.0 * f(&flat["cost_per_month_usd"])).abs() < 1e-6);
    assert!((term_usd(lines[2]) - f(&g["total_usd"])).abs() < 1e-6);
}

#[test]
fn quotas_that_cover_today_but_not_the_grown_term_say_so() {
    let quotas = [
        "--set",
        "gpus[0].max_gpus=4",
        "--set",
        "gpus[1].max_gpus=1",
        "--set",
        "gpus[2].max_gpus=1",
        "--set",
        "api.max_tokens_per_minute=1000",
    ];
    let mut today = vec!["solve", "scenarios/api-vs-reserved.toml", "--quiet"];
    today.extend(quotas);
    assert!(planner(&today).status.success());
    let mut grown = today.clone();
    grown.extend([
        "--set",
        "commitment.term_months=12",
        "--set",
        "commitment.monthly_growth=0.15",
    ]);
    let o = planner(&grown);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("the busiest month carries 4.65 × the planned demand"),
        "{e}"
    );
    assert!(e.contains("h100-sxm ≤ 4"), "{e}");
    assert!(e.contains("lower `commitment.monthly_growth`"), "{e}");
    assert!(stdout(&o).is_empty());
}

#[test]
fn growth_beyond_its_bounds_is_refused_at_its_key() {
    for (growth, months, says) in [
        ("1.5", "12", "commitment.monthly_growth"),
        ("0.5", "120", "outside [1/100, 100]"),
    ] {
        let o = planner(&[
            "solve",
            "scenarios/api-vs-reserved.toml",
            "--set",
            &format!("commitment.term_months={months}"),
            "--set",
            &format!("commitment.monthly_growth={growth}"),
            "--quiet",
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("commitment.monthly_growth"),
            "{}",
            stderr(&o)
        );
        assert!(stdout(&o).is_empty());
    }
}

#[test]
fn reservations_on_a_horizon_shorter_than_a_day_are_warned_about() {
    let quiet = json(&planner(&[
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--format",
        "json",
        "--quiet",
    ]));
    assert!(quiet["commitment"].get("short_horizon_warning").is_none());
    // Renting made dear, the four one-minute slots reserve an H100.
    let args = [
        "solve",
        "tests/fixtures/ok/tiny.toml",
        "--set",
        "gpus[0].on_demand_usd_per_gpu_hour=100",
        "--set",
        "gpus[1].on_demand_usd_per_gpu_hour=100",
    ];
    let text = planner(&args);
    assert!(text.status.success(), "{}", stderr(&text));
    assert!(
        stdout(&text)
            .contains("WARNING: reservations chosen on a horizon of 0.07 h, shorter than a day"),
        "{}",
        stdout(&text)
    );
    let plan = json(&planner(
        &[&args[..], &["--format", "json", "--quiet"]].concat(),
    ));
    assert_eq!(plan["reserved"]["h100-sxm"], 1);
    assert!(plan["commitment"]["short_horizon_warning"].is_string());
}

/// `scenarios/api-vs-reserved.toml` over a term, with `sets` added.
fn over_a_term(sets: &[&str]) -> serde_json::Value {
    let mut args = vec!["solve", "scenarios/api-vs-reserved.toml"];
    for s in sets {
        args.extend(["--set", s]);
    }
    args.extend(["--format", "json", "--quiet"]);
    json(&planner(&args))
}

#[test]
fn a_term_longer_than_a_reservation_is_planned_reservation_by_reservation() {
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    let grows = [
        "commitment.term_months=36",
        "commitment.monthly_growth=0.03",
    ];
    let held = over_a_term(&grows);
    let renewed = over_a_term(&[grows[0], grows[1], "commitment.renewal_months=12"]);
    let (h, r) = (
        &held["commitment"]["growth"],
        &renewed["commitment"]["growth"],
    );
    assert!(h.get("stages").is_none(), "{h}");
    let stages = r["stages"].as_array().unwrap();
    assert_eq!(
        stages
            .iter()
            .map(|s| f(&s["first_month"]))
            .collect::<Vec<_>>(),
        [1.0, 13.0, 25.0]
    );
    // Demand grows: each renewal reserves at least as many; the first
    // reservation is the plan's.
    let count = |s: &serde_json::Value| f(&s["reserved"]["h100-sxm"]);
    assert!(stages.windows(2).all(|w| count(&w[1]) >= count(&w[0])));
    assert!(count(&stages[2]) > count(&stages[0]), "{r}");
    assert_eq!(
        stages[0]["reserved"]["h100-sxm"],
        renewed["reserved"]["h100-sxm"]
    );
    // Holding one reservation is weighed too: the plan is never dearer.
    assert!(f(&r["total_usd"]) <= f(&h["total_usd"]) * (1.0 + f(&r["proven_gap"])));
    assert_eq!(r["renewal"]["renewed"], true);
    assert!((f(&r["renewal"]["held_usd"]) - f(&h["total_usd"])).abs() <= 0.01 * f(&h["total_usd"]));
    // The term, its stages, its years and the purchase add up alike.
    for g in [h, r] {
        let years = g["years"].as_array().unwrap();
        assert_eq!(years.len(), 3);
        assert!(years.iter().all(|y| y["months"] == 12));
        let by_year: f64 = years.iter().map(|y| f(&y["usd"])).sum();
        assert!((by_year - f(&g["total_usd"])).abs() < 1e-6 * by_year);
        assert!((f(&g["average_usd_per_year"]) - by_year / 3.0).abs() < 1e-6 * by_year);
    }
    let by_stage: f64 = stages.iter().map(|s| f(&s["usd"])).sum();
    assert!((by_stage - f(&r["total_usd"])).abs() < 1e-6 * by_stage);
    assert_eq!(renewed["purchase"]["term_years"], r["years"]);
    assert_eq!(renewed["purchase"]["term_usd"], r["total_usd"]);
    // One reservation for the term leaves year 3's growth to on-demand.
    assert!(f(&h["years"][2]["on_demand_usd"]) > f(&r["years"][2]["on_demand_usd"]));

    // A yearly price decline is taken at each renewal, never dearer.
    let falling = over_a_term(&[
        grows[0],
        grows[1],
        "commitment.renewal_months=12",
        "commitment.price_decline_per_year=0.1",
    ]);
    let d = &falling["commitment"]["growth"];
    let factors: Vec<f64> = d["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| f(&s["price_factor"]))
        .collect();
    assert!((factors[1] - 0.9).abs() < 1e-12 && (factors[2] - 0.81).abs() < 1e-12);
    assert!(f(&d["total_usd"]) < f(&r["total_usd"]));
    assert_eq!(d["years"][0], r["years"][0], "year 1 is at list prices");
}

#[test]
fn a_short_last_reservation_period_runs_on_demand_and_the_report_says_so() {
    let sets = [
        "--set",
        "commitment.term_months=30",
        "--set",
        "commitment.renewal_months=12",
        "--set",
        "commitment.monthly_growth=0.03",
        "--set",
        "commitment.price_decline_per_year=0.1",
    ];
    let mut args = vec!["solve", "scenarios/api-vs-reserved.toml", "--quiet"];
    args.extend(sets);
    let text = stdout(&planner(&args));
    args.extend(["--format", "json"]);
    let plan = json(&planner(&args));
    let g = &plan["commitment"]["growth"];
    // Six months left would pay a whole 12-month reservation: renting wins.
    let last = &g["stages"][2];
    assert_eq!(
        (last["first_month"].as_u64(), last["months"].as_u64()),
        (Some(25), Some(6))
    );
    assert!(
        last["reserved"]
            .as_object()
            .unwrap()
            .values()
            .all(|n| n == 0),
        "{g}"
    );
    assert_eq!(g["years"][2]["months"], 6);
    assert_eq!(g["years"][2]["reserved_usd"], 0.0);
    // Renewing is the plan here, and the report weighs it against holding.
    let renewal = &g["renewal"];
    assert_eq!(renewal["renewed"], true);
    assert!(renewal["renewed_usd"].as_f64() < renewal["held_usd"].as_f64());
    assert_eq!(renewal["renewed_usd"], g["total_usd"]);
    for says in [
        "TERM IN RESERVATIONS (30 months in reservations of 12 months, demand +3.0% a month, GPU prices 10.0% lower each year;",
        "months 25-30: let every reservation lapse: nothing, ",
        "these months run on demand (and the API where allowed): a reservation bought for 6 months would be paid for at least 12",
        "over the 30-month term in 3 reservations, with growth: proven within",
        "renewing is the plan (",
        "term       30 months:",
        "year 3 ",
        "(6 months)",
        "over the 12-month first reservation",
    ] {
        assert!(text.contains(says), "{says}\n{text}");
    }
    // The horizon's reservations renewed unchanged cost more.
    assert!(g["horizon_only"]["term_usd"].as_f64() > g["total_usd"].as_f64());
    // Without growth or a decline, holding one reservation for the 30
    // months is cheaper than renewing into a short last period: the plan.
    let held = json(&planner(&[
        "solve",
        "scenarios/api-vs-reserved.toml",
        "--quiet",
        "--format",
        "json",
        "--set",
        "commitment.term_months=30",
        "--set",
        "commitment.renewal_months=12",
    ]));
    let h = &held["commitment"]["growth"];
    assert_eq!(h["renewal"]["renewed"], false);
    assert!(h.get("stages").is_none(), "{h}");
    assert_eq!(h["renewal"]["held_usd"], h["total_usd"]);
    assert!(h["renewal"]["renewed_usd"].as_f64() > h["total_usd"].as_f64());
}

#[test]
fn a_price_decline_without_renewals_is_refused_at_its_key() {
    for (sets, says) in [
        (
            vec![
                "commitment.term_months=36",
                "commitment.price_decline_per_year=0.1",
            ],
            "state `renewal_months` below `term_months`",
        ),
        (
            vec![
                "commitment.term_months=36",
                "commitment.renewal_months=12",
                "commitment.price_decline_per_year=0.7",
            ],
            "commitment.price_decline_per_year",
        ),
        (
            vec!["commitment.term_months=36", "commitment.renewal_months=0"],
            "commitment.renewal_months",
        ),
    ] {
        let mut args = vec!["solve", "scenarios/api-vs-reserved.toml", "--quiet"];
        for s in &sets {
            args.extend(["--set", s]);
        }
        let o = planner(&args);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
        assert!(stdout(&o).is_empty());
    }
}
