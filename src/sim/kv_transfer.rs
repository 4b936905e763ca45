//! The KV cache's move from a disaggregated unit's prefill replica to its
//! decode replica (`docs/model.md` §4.3): a fixed latency plus the prompt's
//! KV bytes over the links that carry them.

use crate::perf::Layout;
use crate::profiles::{AttentionKind, GpuProfile, ModelProfile};

/// Seconds to move a prompt's KV cache: a fixed latency plus the bytes
/// over the links that carry them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct KvTransfer {
    /// Seconds per prompt token: KV bytes per token / (links × GB/s per link).
    pub s_per_token: f64,
    /// Seconds per transfer, whatever its size.
    pub latency_s: f64,
}

impl KvTransfer {
    /// A transfer of `bytes_per_token` per prompt token over `links`
    /// parallel links of `gb_s` GB/s each, one way, with `latency_s` per
    /// transfer. An infinite `gb_s` moves the bytes in no time.
    pub(crate) fn new(bytes_per_token: f64, links: u32, gb_s: f64, latency_s: f64) -> Self {
        debug_assert!(gb_s > 0.0, "a link of {gb_s} GB/s moves nothing");
        let bytes_per_s = f64::from(links.max(1)) * gb_s * 1e9;
        KvTransfer {
            s_per_token: if bytes_per_s.is_finite() && bytes_per_s > 0.0 {
                bytes_per_token / bytes_per_s
            } else {
                0.0
            },
            latency_s,
        }
    }

    /// How a unit of `unit_gpus` GPUs of `gpu` moves a prompt's KV cache
    /// of `shape` (the model at its KV precision) from a prefill replica of
    /// `prefill` layout (docs/model.md §4.3): its KV bytes per token over
    /// the links the cache is spread on (the KV heads' shards across TP
    /// ranks; one rank's link under latent attention or attention-DP,
    /// where a sequence's cache sits whole on one GPU), at the NVLink
    /// bandwidth when the unit fits one NVLink domain, else at
    /// `network_gb_s`; the link's hop latency per transfer.
    pub(crate) fn between(
        gpu: &GpuProfile,
        shape: &ModelProfile,
        prefill: Layout,
        unit_gpus: u32,
        network_gb_s: f64,
    ) -> Self {
        let whole_on_one =
            shape.attention.kind == AttentionKind::Latent || prefill.attention_dp > 1;
        let links = if whole_on_one {
            1
        } else {
            prefill.tp.min(shape.kv_heads.max(1))
        };
        let gb_s = if unit_gpus <= gpu.nvlink_domain() {
            gpu.interconnect_gb_s
        } else {
            network_gb_s
        };
        KvTransfer::new(
            shape.kv_bytes_per_token() + shape.sliding_kv_bytes_per_token(),
            links,
            gb_s,
            gpu.hop_latency_us * 1e-6,
        )
    }

    /// Seconds to move the KV cache of `prompt_tokens`.
    pub(crate) fn seconds(&self, prompt_tokens: u32) -> f64 {
        self.latency_s + self.s_per_token * f64::from(prompt_tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::KvTransfer;

    #[test]
    fn a_transfer_is_its_latency_plus_the_bytes_over_the_links() {
        // 160 KiB a token (Llama-3-70B with an FP8 KV cache) over 8 links of
        // 450 GB/s.
        let t = KvTransfer::new(163_840.0, 8, 450.0, 2e-6);
        let s = t.seconds(8_192);
        let expected = 2e-6 + 163_840.0 * 8_192.0 / (8.0 * 450e9);
        assert!((s - expected).abs() < 1e-12, "{s} vs {expected}");
        assert_eq!(
            KvTransfer::new(1e6, 1, f64::INFINITY, 0.0).seconds(1_000),
            0.0
        );
    }

    #[test]
    fn the_documented_example_moves_2048_tokens_in_half_a_millisecond() {
        // docs/model.md §4.3: Llama 3.1 70B, FP8 KV cache, TP2 on H200.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
        let gpu = crate::profiles::load_gpu(&dir, "h200").unwrap();
        let mut model = crate::profiles::load_model(&dir, "llama-3.1-70b").unwrap();
        model.kv_bytes_per_element = 1.0;
        assert_eq!(model.kv_bytes_per_token(), 163_840.0);
        let t = KvTransfer::between(&gpu, &model, crate::perf::Layout::tp(2), 6, 50.0);
        let ms = t.seconds(2_048) * 1e3;
        assert!((ms - (0.4807 + 0.0285)).abs() < 1e-3, "{ms} ms");
        // Past the node, the network's 50 GB/s a GPU.
        let far = KvTransfer::between(&gpu, &model, crate::perf::Layout::tp(2), 16, 50.0);
        assert!(far.seconds(2_048) > 3.3e-3);
    }
}
