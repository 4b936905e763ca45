//! The `[planning]` section: slots, the peak statistic and the MILP's settings.

use super::Validator;
use crate::milp::Method;
use crate::scenario::raw::RawScenario;
use crate::scenario::{PeakStatistic, Planning};

impl Validator {
    pub(super) fn planning(&mut self, raw: &RawScenario) -> Planning {
        let p = raw.planning.as_ref();
        let slot_minutes = p.and_then(|p| p.slot_minutes).unwrap_or(60);
        if self.bounded("planning.slot_minutes", f64::from(slot_minutes))
            && 1440 % slot_minutes != 0
        {
            self.at_key(
                "planning.slot_minutes",
                format!("`planning.slot_minutes` must divide a day (1440) evenly, e.g. 15, 30, 60, 120; got {slot_minutes}"),
            );
        }
        let quantile = p.and_then(|p| p.peak_quantile);
        let peak_statistic = match p.and_then(|p| p.peak_statistic.as_ref()) {
            None => PeakStatistic::MaxMinute,
            Some(s) => match s.get_ref().as_str() {
                "max-minute" => PeakStatistic::MaxMinute,
                "mean" => PeakStatistic::Mean,
                "quantile-minute" => {
                    let q = quantile.unwrap_or(0.95);
                    self.bounded("planning.peak_quantile", q);
                    PeakStatistic::QuantileMinute { quantile: q }
                }
                other => {
                    self.at_span(s, format!("unknown peak statistic `{other}`; accepted: \"max-minute\", \"quantile-minute\", \"mean\""));
                    PeakStatistic::MaxMinute
                }
            },
        };
        let mip_gap = p.and_then(|p| p.mip_gap).unwrap_or(0.01);
        self.bounded("planning.mip_gap", mip_gap);
        let time_limit_s = p.and_then(|p| p.time_limit_s).unwrap_or(60.0);
        self.bounded("planning.time_limit_s", time_limit_s);
        let threads = p.and_then(|p| p.threads).unwrap_or(1);
        self.bounded("planning.threads", f64::from(threads));
        let milp_method = match p.and_then(|p| p.milp_method.as_ref()) {
            None => Method::Auto,
            Some(s) => match s.get_ref().as_str() {
                "auto" => Method::Auto,
                "monolithic" => Method::Monolithic,
                "decomposed" => Method::Decomposed,
                other => {
                    self.at_span(s, format!("unknown MILP method `{other}`; accepted: \"auto\", \"monolithic\", \"decomposed\""));
                    Method::Auto
                }
            },
        };
        let usd_per_deployment_month = p
            .and_then(|p| p.usd_per_deployment_month)
            .unwrap_or(crate::scenario::USD_PER_DEPLOYMENT_MONTH);
        self.bounded(
            "planning.usd_per_deployment_month",
            usd_per_deployment_month,
        );
        let usd_per_gpu_vendor_month = p
            .and_then(|p| p.usd_per_gpu_vendor_month)
            .unwrap_or(crate::scenario::USD_PER_GPU_VENDOR_MONTH);
        self.bounded(
            "planning.usd_per_gpu_vendor_month",
            usd_per_gpu_vendor_month,
        );
        Planning {
            slot_minutes,
            peak_statistic,
            mip_gap,
            time_limit_s,
            threads,
            milp_method,
            usd_per_deployment_month,
            usd_per_gpu_vendor_month,
            reserve_fewest_within_gap: p.and_then(|p| p.reserve_fewest_within_gap).unwrap_or(true),
        }
    }
}
