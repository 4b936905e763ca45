//! The `[simulation]` section: how capacity is measured and the plan replayed.

use super::Validator;
use crate::scenario::raw::RawSimulation;
use crate::scenario::{CapacitySource, Simulation, VerifySlots};
use crate::sim::{Router, Scheduler};

impl Validator {
    /// `simulation.max_batched_tokens`: one chunk size for every offer.
    pub(super) fn chunk_pin(&mut self, raw: Option<&RawSimulation>) -> Option<u32> {
        let pinned = raw?.max_batched_tokens?;
        self.bounded("simulation.max_batched_tokens", f64::from(pinned));
        Some(pinned)
    }

    pub(super) fn simulation(&mut self, raw: Option<&RawSimulation>) -> Simulation {
        let d = Simulation::default();
        let Some(r) = raw else { return d };
        let capacity = match r.capacity.as_ref() {
            None => d.capacity,
            Some(s) => match s.get_ref().as_str() {
                "simulated" => CapacitySource::Simulated,
                "analytic" => CapacitySource::Analytic,
                other => {
                    self.at_span(s, format!("unknown capacity source `{other}`; accepted: \"simulated\", \"analytic\""));
                    d.capacity
                }
            },
        };
        let capacity_requests = r.capacity_requests.unwrap_or(d.capacity_requests);
        self.bounded("simulation.capacity_requests", f64::from(capacity_requests));
        let verify = match r.verify.as_ref() {
            None => d.verify,
            Some(s) => match s.get_ref().as_str() {
                "sample" => VerifySlots::Sample,
                "sample-only" => VerifySlots::SampleOnly,
                "all" => VerifySlots::All,
                "off" => VerifySlots::Off,
                other => {
                    self.at_span(s, format!("unknown verify mode `{other}`; accepted: \"sample\", \"sample-only\", \"all\", \"off\""));
                    d.verify
                }
            },
        };
        let max_rounds = r.max_rounds.unwrap_or(d.max_rounds);
        self.bounded("simulation.max_rounds", f64::from(max_rounds));
        let tighten_factor = r.tighten_factor.unwrap_or(d.tighten_factor);
        self.bounded("simulation.tighten_factor", tighten_factor);
        let attainment_margin_points = r
            .attainment_margin_points
            .unwrap_or(d.attainment_margin_points);
        self.bounded(
            "simulation.attainment_margin_points",
            attainment_margin_points,
        );
        let max_utilisation = r.max_utilisation.unwrap_or(d.max_utilisation);
        if !self.bounded("simulation.max_utilisation", max_utilisation) {
            self.at_key(
                "simulation.max_utilisation",
                "a queue fed at or above its service rate grows without bound",
            );
        }
        let fleet_requests_per_replica = r
            .fleet_requests_per_replica
            .unwrap_or(d.fleet_requests_per_replica);
        self.bounded(
            "simulation.fleet_requests_per_replica",
            f64::from(fleet_requests_per_replica),
        );
        let burst_scale_max = r.burst_scale_max.unwrap_or(d.burst_scale_max);
        self.bounded("simulation.burst_scale_max", burst_scale_max);
        let seed_band = r.seed_band.unwrap_or(d.seed_band);
        self.bounded("simulation.seed_band", f64::from(seed_band));
        let fleet_max_replicas = r.fleet_max_replicas.unwrap_or(d.fleet_max_replicas);
        self.bounded(
            "simulation.fleet_max_replicas",
            f64::from(fleet_max_replicas),
        );
        let scheduler = match r.scheduler.as_ref() {
            None => d.scheduler,
            Some(s) => Scheduler::from_name(s.get_ref()).or_else(|| {
                let accepted = Scheduler::ALL.map(|a| format!("\"{}\"", a.name()));
                self.at_span(
                    s,
                    format!(
                        "unknown scheduler `{}`; accepted: {}",
                        s.get_ref(),
                        accepted.join(", ")
                    ),
                );
                d.scheduler
            }),
        };
        let router = match r.router.as_ref() {
            None => d.router,
            Some(s) => Router::from_name(s.get_ref()).unwrap_or_else(|| {
                let accepted = Router::ALL.map(|a| format!("\"{}\"", a.name()));
                self.at_span(
                    s,
                    format!(
                        "unknown router `{}`; accepted: {}",
                        s.get_ref(),
                        accepted.join(", ")
                    ),
                );
                d.router
            }),
        };
        Simulation {
            seed: r.seed.unwrap_or(d.seed),
            capacity_seed: r.capacity_seed.unwrap_or(d.capacity_seed),
            capacity,
            capacity_requests,
            verify,
            max_rounds,
            tighten_factor,
            attainment_margin_points,
            max_utilisation,
            fleet_requests_per_replica,
            burst_scale_max,
            seed_band,
            fleet_max_replicas,
            scheduler,
            router,
            prefix_caching: r.prefix_caching.unwrap_or(d.prefix_caching),
        }
    }
}
