//! Settings shared by the property tests.

use proptest::test_runner::{Config, RngSeed};

/// A property test's configuration: `cases` cases drawn from a fixed seed, so
/// the suite runs the same cases on every machine and every run. Another seed:
/// `PROPTEST_RNG_SEED=N`; a random one: `PROPTEST_RNG_SEED=random` (proptest
/// warns that it is not a number and draws a random seed); more cases:
/// `PROPTEST_CASES=2000`.
pub(crate) fn proptest_config(cases: u32) -> Config {
    let mut config = Config::with_cases(cases);
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = RngSeed::Fixed(0x0D15_EA5E);
    }
    if let Some(n) = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        config.cases = n;
    }
    config
}
