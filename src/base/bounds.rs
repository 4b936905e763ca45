//! Accepted ranges of the numbers users give: one [`Bound`] per key, kept in
//! tables beside the code that reads them (the scenario's in
//! `scenario/validate/mod.rs`, the profiles' in `profiles/`, the commands' in
//! `cli/`). A number that sizes memory or time has an upper bound, so one
//! oversized value is refused with its key instead of exhausting memory or
//! running for hours; a price, latency or count has the physical range an
//! engineer would accept. docs/scenario-format.md lists every bound.

/// The smallest value an interval open at 0, `(0, …]`, accepts.
pub(crate) const MIN_POSITIVE: f64 = 1e-9;

/// The accepted interval of one key, and its unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bound {
    /// The key as documented: `planning.threads`, `gpus[].max_batch`, `--days`.
    pub key: &'static str,
    /// Lower end.
    pub min: f64,
    /// Whether `min` itself is refused (`(0, …` rather than `[0, …`).
    pub min_open: bool,
    /// Upper end.
    pub max: f64,
    /// Whether `max` itself is refused.
    pub max_open: bool,
    /// Unit shown after the interval ("" when the number has none).
    pub unit: &'static str,
}

impl Bound {
    /// `[min, max]`, both ends accepted.
    pub const fn closed(key: &'static str, min: f64, max: f64, unit: &'static str) -> Bound {
        Bound {
            key,
            min,
            min_open: false,
            max,
            max_open: false,
            unit,
        }
    }

    /// `(0, max]`: a positive number up to `max`.
    pub const fn positive(key: &'static str, max: f64, unit: &'static str) -> Bound {
        Bound {
            key,
            min: 0.0,
            min_open: true,
            max,
            max_open: false,
            unit,
        }
    }

    /// `(min, max)`, both ends refused.
    pub const fn open(key: &'static str, min: f64, max: f64) -> Bound {
        Bound {
            key,
            min,
            min_open: true,
            max,
            max_open: true,
            unit: "",
        }
    }

    /// `[min, max)`.
    pub const fn half_open(key: &'static str, min: f64, max: f64) -> Bound {
        Bound {
            key,
            min,
            min_open: false,
            max,
            max_open: true,
            unit: "",
        }
    }

    /// Whether `value` lies in the interval (NaN never does). An interval
    /// open at 0 starts at [`MIN_POSITIVE`], so a subnormal (5e-324) or a
    /// value too small to mean anything (1e-300) is refused with its key
    /// rather than dividing by almost nothing later; and −0 is below 0.
    pub fn contains(&self, value: f64) -> bool {
        let above = if self.min_open {
            value > self.min && (self.min != 0.0 || value >= MIN_POSITIVE)
        } else {
            value >= self.min && !(value == 0.0 && value.is_sign_negative() && self.min == 0.0)
        };
        let below = if self.max_open {
            value < self.max
        } else {
            value <= self.max
        };
        above && below
    }

    /// The interval as written in messages and docs: `(0, 1000] USD per GPU-hour`.
    pub fn interval(&self) -> String {
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" {}", self.unit)
        };
        format!(
            "{}{}, {}{}{unit}",
            if self.min_open { "(" } else { "[" },
            number(self.min),
            number(self.max),
            if self.max_open { ")" } else { "]" },
        )
    }

    /// `None` when `value` is accepted, else the message naming `key` (the
    /// key as the user wrote it, indices included), the interval and the value.
    pub fn check(&self, key: &str, value: f64) -> Option<String> {
        (!self.contains(value)).then(|| {
            let tiny = self.min_open && self.min == 0.0 && value > 0.0 && value < MIN_POSITIVE;
            format!(
                "`{key}` must be in {}, got {}{}",
                self.interval(),
                number(value),
                if tiny {
                    format!(", below {MIN_POSITIVE:e}, the least a positive value may be")
                } else {
                    String::new()
                }
            )
        })
    }
}

/// The bound of `key` in `table`; `key` may carry array indices
/// (`gpus[2].max_batch` finds `gpus[].max_batch`). Panics on a key missing
/// from the table: every key read is listed.
pub(crate) fn find<'a>(table: &'a [Bound], key: &str) -> &'a Bound {
    let generic = strip_indices(key);
    table
        .iter()
        .find(|b| b.key == generic)
        .unwrap_or_else(|| panic!("no bound for `{key}`"))
}

/// `gpus[2].max_batch` → `gpus[].max_batch`.
fn strip_indices(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut in_index = false;
    for c in key.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push('[');
            }
            ']' => {
                in_index = false;
                out.push(']');
            }
            _ if in_index => {}
            _ => out.push(c),
        }
    }
    out
}

/// Integers without a fraction, large and small values in exponent form.
fn number(v: f64) -> String {
    if v == 0.0 && v.is_sign_negative() {
        "-0".into()
    } else if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else if v.is_finite() && (v.abs() >= 1e15 || (v != 0.0 && v.abs() < 1e-4)) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A table's rows as Markdown (`| key | accepted |`), for the docs.
#[cfg(test)]
pub(crate) fn markdown(table: &[Bound]) -> String {
    use std::fmt::Write as _;
    let mut s = String::from("| key | accepted |\n|---|---|\n");
    for b in table {
        let _ = writeln!(s, "| `{}` | {} |", b.key, b.interval());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: [Bound; 3] = [
        Bound::positive("gpus[].price", 1000.0, "USD per GPU-hour"),
        Bound::closed("threads", 1.0, 64.0, ""),
        Bound::open("q", 0.0, 1.0),
    ];

    #[test]
    fn intervals_read_as_written() {
        assert_eq!(TABLE[0].interval(), "(0, 1000] USD per GPU-hour");
        assert_eq!(TABLE[1].interval(), "[1, 64]");
        assert_eq!(TABLE[2].interval(), "(0, 1)");
    }

    #[test]
    fn ends_nan_and_infinities() {
        let b = find(&TABLE, "gpus[7].price");
        assert!(b.contains(1000.0) && !b.contains(0.0));
        for bad in [f64::NAN, f64::INFINITY, -1.0, 1e308] {
            assert!(b.check("gpus[7].price", bad).is_some(), "{bad}");
        }
        assert_eq!(
            b.check("gpus[7].price", 1e308).unwrap(),
            "`gpus[7].price` must be in (0, 1000] USD per GPU-hour, got 1e308"
        );
        assert!(!TABLE[2].contains(1.0) && !TABLE[2].contains(0.0));
    }

    /// Issue: `--set 'demand[0].scale=5e-324'` and a price of 1e-300 got in
    /// and came out as an unlocated negative or infinite figure.
    #[test]
    fn subnormal_and_negative_zero_inputs_are_refused() {
        let price = &TABLE[0];
        for bad in [5e-324, 1e-300, 1e-10] {
            assert!(!price.contains(bad), "{bad}");
        }
        assert!(price.contains(MIN_POSITIVE));
        let gap = Bound::half_open("planning.mip_gap", 0.0, 1.0);
        assert!(gap.contains(0.0) && !gap.contains(-0.0));
        assert_eq!(
            gap.check("planning.mip_gap", -0.0).unwrap(),
            "`planning.mip_gap` must be in [0, 1), got -0"
        );
    }
}
