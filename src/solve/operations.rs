//! The price for complexity applied to a round's solution
//! ([`crate::milp::deployments`]): the scenario's operating prices per
//! deployment and per GPU vendor over the horizon, and what the pruned plan
//! runs, with the saving each of its deployments buys.

use crate::capacity::CapacityEntry;
use crate::milp::deployments::{Deployments, Pruned};
use crate::milp::Problem;
use crate::plan::{DeploymentRun, Operations, Plan};
use crate::scenario::Scenario;

/// The vendor of the GPU type `gpu_id` offers: its profile's, else the
/// type itself.
fn vendor_of(scenario: &Scenario, gpu_id: &str) -> String {
    scenario
        .gpus
        .iter()
        .find(|o| o.id == gpu_id)
        .and_then(|o| o.profile.vendor.clone())
        .unwrap_or_else(|| gpu_id.to_string())
}

/// The deployments and vendors of `problem`'s options, and the scenario's
/// operating prices over its horizon; each deployment's label beside it.
pub(super) fn deployments_of(
    scenario: &Scenario,
    capacity: &[Vec<CapacityEntry>],
    problem: &Problem,
) -> (Deployments, Vec<Vec<String>>) {
    let months = problem.horizon_hours() / crate::base::units::HOURS_PER_MONTH;
    let mut labels: Vec<Vec<String>> = Vec::with_capacity(problem.tiers.len());
    let group = problem
        .tiers
        .iter()
        .enumerate()
        .map(|(k, tier)| {
            let mut keys: Vec<String> = Vec::new();
            let group = tier
                .options
                .iter()
                .map(|o| {
                    let key = capacity[k][o.entry].config.deployment_label();
                    keys.iter().position(|x| *x == key).unwrap_or_else(|| {
                        keys.push(key);
                        keys.len() - 1
                    })
                })
                .collect();
            labels.push(keys);
            group
        })
        .collect();
    let mut vendors: Vec<String> = Vec::new();
    let vendor = problem
        .gpus
        .iter()
        .map(|g| {
            let name = vendor_of(scenario, &g.id);
            vendors.iter().position(|v| *v == name).unwrap_or_else(|| {
                vendors.push(name);
                vendors.len() - 1
            })
        })
        .collect();
    (
        Deployments {
            group,
            vendor,
            usd_per_deployment: scenario.planning.usd_per_deployment_month * months,
            usd_per_vendor: scenario.planning.usd_per_gpu_vendor_month * months,
        },
        labels,
    )
}

/// What `plan` runs under the operating prices: each deployment with its
/// share of its tier and the saving it buys, the vendors, and what pruning
/// dropped or merged.
pub(super) fn operations(
    scenario: &Scenario,
    plan: &Plan,
    d: &Deployments,
    labels: &[Vec<String>],
    pruned: &Pruned,
) -> Operations {
    let tier_name = |k: usize| scenario.tiers[k].name.clone();
    let deployments: Vec<DeploymentRun> = pruned
        .kept
        .iter()
        .map(|kept| {
            let label = labels[kept.tier][kept.group].clone();
            let share = plan.tiers.get(&tier_name(kept.tier)).map_or(0.0, |t| {
                t.configurations
                    .iter()
                    .filter(|c| c.config.deployment_label() == label)
                    .map(|c| c.share)
                    .sum()
            });
            DeploymentRun {
                tier: tier_name(kept.tier),
                deployment: label,
                share,
                saving_usd: kept.saving_usd,
            }
        })
        .collect();
    let mut vendors: Vec<String> = plan
        .tiers
        .values()
        .flat_map(|t| &t.configurations)
        .map(|c| vendor_of(scenario, &c.config.gpu_type))
        .collect();
    vendors.sort();
    vendors.dedup();
    let operating_usd =
        deployments.len() as f64 * d.usd_per_deployment + vendors.len() as f64 * d.usd_per_vendor;
    Operations {
        usd_per_deployment: d.usd_per_deployment,
        usd_per_vendor: d.usd_per_vendor,
        operating_usd,
        deployments,
        vendors,
        // Every option of a deployment ruled out (this round or an earlier
        // one): the price took it out.
        dropped: d
            .group
            .iter()
            .enumerate()
            .flat_map(|(k, groups)| {
                (0..labels[k].len())
                    .filter(move |&g| {
                        groups
                            .iter()
                            .zip(&pruned.allowed[k])
                            .filter(|(&gc, _)| gc == g)
                            .all(|(_, &ok)| !ok)
                    })
                    .map(move |g| (k, g))
            })
            .map(|(k, g)| format!("{}: {}", tier_name(k), labels[k][g]))
            .collect(),
    }
}
