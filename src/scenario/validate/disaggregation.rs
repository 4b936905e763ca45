//! `gpus[].disaggregated` and `gpus[].network_gb_s`: the disaggregated
//! units an offer searches and the network that links their nodes.

use super::Validator;
use crate::perf::Layout;
use crate::profiles::GpuProfile;
use crate::scenario::pd_ratio::PdRatio;
use crate::scenario::raw::RawGpuOffer;

impl Validator {
    /// `gpus[i].network_gb_s`, bounded, else the profile's `scaleout_gb_s`.
    pub(super) fn network(
        &mut self,
        i: usize,
        g: &RawGpuOffer,
        profile: &GpuProfile,
    ) -> Option<f64> {
        match g.network_gb_s {
            Some(rate) => {
                self.bounded(&format!("gpus[{i}].network_gb_s"), rate);
                Some(rate)
            }
            None => profile.scaleout_gb_s,
        }
    }

    /// The units of `gpus[i].disaggregated`, each read as `xPyD`; a unit
    /// of every layout larger than the GPU's NVLink domain with no network
    /// stated is a problem (its replicas could not reach each other).
    pub(super) fn disaggregated(
        &mut self,
        i: usize,
        g: &RawGpuOffer,
        profile: &GpuProfile,
        layouts: &[Layout],
        network_gb_s: Option<f64>,
    ) -> Vec<PdRatio> {
        let mut out = Vec::new();
        let domain = profile.nvlink_domain();
        let smallest = layouts.iter().map(Layout::gpus).min().unwrap_or(1);
        for (j, text) in g.disaggregated.iter().flatten().enumerate() {
            let key = format!("gpus[{i}].disaggregated[{j}]");
            let ratio = match PdRatio::parse(text.get_ref()) {
                Ok(r) => r,
                Err(e) => {
                    self.at_key(key, e);
                    continue;
                }
            };
            let unit_gpus = ratio.replicas() * smallest;
            if network_gb_s.is_none() && unit_gpus > domain {
                self.at_key(
                    key,
                    format!(
                        "a {} unit of {smallest}-GPU replicas holds {unit_gpus} GPUs, more than the {}'s {domain}-GPU NVLink domain, and no network links its nodes: state `gpus[{i}].network_gb_s` (GB/s per GPU, one way, e.g. 50 for one 400 Gb/s NIC per GPU) or list a smaller unit",
                        ratio.label(),
                        profile.name
                    ),
                );
                continue;
            }
            if !out.contains(&ratio) {
                out.push(ratio);
            }
        }
        out
    }
}
