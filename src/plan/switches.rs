//! A pooled fleet's model switches: the GPUs of a type that serve another
//! model than in the slot before, and how long a replica that starts
//! serving a model is down while it loads it.
//!
//! In a pooled plan (`[[models]]`) every replica that is up in a slot and
//! was not in the slot before loads its model at the slot's start: its
//! weights from storage at the GPU type's `weights_load_gb_per_s`, then the
//! engine's start-up ([`ENGINE_START_S`]). The replay keeps such replicas
//! down for that long (`replay::fleet`), so the capacity a switch costs is
//! lost in the slot it happens in. A switch proper is a GPU that leaves one
//! model for another in the same slot; a replica that starts on a GPU that
//! was idle or newly rented loads all the same and is counted as a load.
//! The horizon's pattern repeats, so its first slot follows its last.

use super::Plan;
use serde::Serialize;
use std::collections::BTreeMap;

/// Seconds an engine takes from launch to its first request once the
/// weights are read: vLLM's profiling, KV-cache allocation, torch.compile
/// (from its cache) and CUDA-graph capture, 34 s of engine start and 59 s
/// to the first response on an 8B model (vllm-project/vllm#20264); larger
/// models and tensor parallelism take longer, so 60 s is a floor.
pub(crate) const ENGINE_START_S: f64 = 60.0;

/// Seconds a replica holding `weight_bytes_per_gpu` on each GPU is down
/// while it loads: the weights read at `gb_per_s` per GPU (the GPUs of a
/// replica read their shards side by side), then the engine's start-up.
pub(crate) fn load_s(weight_bytes_per_gpu: f64, gb_per_s: f64) -> f64 {
    weight_bytes_per_gpu / (gb_per_s * 1e9) + ENGINE_START_S
}

/// Per slot, how many replicas are up that were not in the slot before
/// (the last slot precedes the first: the horizon's pattern repeats).
pub(crate) fn starts(replicas_by_slot: &[u32]) -> Vec<u32> {
    let n = replicas_by_slot.len();
    (0..n)
        .map(|t| {
            let before = replicas_by_slot[(t + n - 1) % n];
            replicas_by_slot[t].saturating_sub(before)
        })
        .collect()
}

/// The switches of one GPU type over the horizon.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TypeSwitches {
    /// GPUs that left one model for another, summed over the slots.
    pub gpus_switched: u32,
    /// GPUs that started serving a model (switched, idle before, or newly
    /// rented), summed over the slots.
    pub gpus_loaded: u32,
    /// Slots (0-based) in which two or more models run on the type's GPUs.
    pub shared_slots: Vec<usize>,
    /// Per model, its GPUs of this type in each slot.
    pub gpus_by_model: BTreeMap<String, Vec<u32>>,
}

/// Per GPU type, what each model of a pooled plan holds of it slot by slot
/// and the GPUs that move between models; empty for a plan of one model.
pub(crate) fn of(plan: &Plan) -> BTreeMap<String, TypeSwitches> {
    let slots = plan.solver.slots;
    let mut held: BTreeMap<String, BTreeMap<String, Vec<u32>>> = BTreeMap::new();
    for tier in plan.tiers.values() {
        let Some(model) = &tier.model else {
            return BTreeMap::new();
        };
        for c in &tier.configurations {
            let by_slot = held
                .entry(c.config.gpu_type.clone())
                .or_default()
                .entry(model.clone())
                .or_insert_with(|| vec![0; slots]);
            for (t, n) in c.replicas_by_slot.iter().enumerate().take(slots) {
                by_slot[t] += n * c.gpus_per_replica;
            }
        }
    }
    held.into_iter()
        .map(|(gpu, gpus_by_model)| {
            let mut switched = 0;
            let mut loaded = 0;
            let mut shared_slots = Vec::new();
            for t in 0..slots {
                let before = (t + slots - 1) % slots;
                let (mut up, mut down) = (0, 0);
                let mut running = 0;
                for v in gpus_by_model.values() {
                    up += v[t].saturating_sub(v[before]);
                    down += v[before].saturating_sub(v[t]);
                    running += u32::from(v[t] > 0);
                }
                switched += up.min(down);
                loaded += up;
                if running > 1 {
                    shared_slots.push(t);
                }
            }
            (
                gpu,
                TypeSwitches {
                    gpus_switched: switched,
                    gpus_loaded: loaded,
                    shared_slots,
                    gpus_by_model,
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replica_starts_where_its_count_rises_and_the_horizon_wraps() {
        assert_eq!(starts(&[1, 3, 3, 0]), vec![1, 2, 0, 0]);
        assert_eq!(starts(&[2, 1, 2]), vec![0, 0, 1]);
        assert_eq!(starts(&[]), Vec::<u32>::new());
    }

    #[test]
    fn loading_reads_the_shard_then_starts_the_engine() {
        // 70 GB a GPU at 2 GB/s: 35 s, then the engine's 60 s.
        assert!((load_s(70e9, 2.0) - 95.0).abs() < 1e-9);
    }
}
