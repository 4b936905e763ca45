//! The sweep grid: each `--set KEY=V1,V2,…` is an axis, and the variants are
//! every combination of one value per axis (the first axis varies slowest).

use crate::base::error::PlannerError;
use crate::scenario::Override;
use serde::Serialize;

/// Most variants a sweep runs unless the user confirms a larger grid.
pub(crate) const MAX_VARIANTS: usize = 1000;

/// The flag that confirms a grid over [`MAX_VARIANTS`].
pub(crate) const LARGE_GRID_FLAG: &str = "--allow-large-grid";

/// Most variants a sweep runs even with [`LARGE_GRID_FLAG`]: each is a full
/// solve of seconds, so this is already hours of work; a larger grid is
/// refused before any variant is built.
pub(crate) const MAX_VARIANTS_ALLOWED: usize = 10_000;

/// One swept key and its values, as written.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Axis {
    pub key: String,
    pub values: Vec<String>,
    #[serde(skip)]
    template: Override,
}

impl Axis {
    /// Parses `KEY=V1,V2,…`. Commas inside brackets, braces or quotes belong
    /// to a value (`gpus[0].tensor_parallel=[2,4],[4,8]` has two values).
    pub fn parse(arg: &str) -> Result<Axis, String> {
        let template = Override::parse(arg)?;
        let values = split_values(&template.value).map_err(|e| format!("--set `{arg}`: {e}"))?;
        if values.iter().any(String::is_empty) {
            return Err(format!(
                "--set `{arg}`: an empty value between commas; write KEY=V1,V2,…"
            ));
        }
        // The same value twice (as written, or as the same number) would
        // solve the same variant twice.
        let same = |a: &str, b: &str| match (a.parse::<f64>(), b.parse::<f64>()) {
            (Ok(x), Ok(y)) => x == y,
            _ => a.trim() == b.trim(),
        };
        for (i, v) in values.iter().enumerate() {
            if let Some(w) = values[..i].iter().find(|w| same(w, v)) {
                return Err(format!(
                    "--set `{arg}`: the value `{v}` repeats `{w}`, which would solve the same variant twice; list each value once"
                ));
            }
        }
        Ok(Axis {
            key: template.key.clone(),
            values,
            template,
        })
    }

    /// The override setting this axis to `value`.
    pub fn at(&self, value: &str) -> Override {
        self.template.with_value(value)
    }

    /// Whether every value is a number, so the axis can be bisected.
    pub fn numeric(&self) -> bool {
        self.values.iter().all(|v| v.parse::<f64>().is_ok())
    }

    /// Whether every value is a whole number (bisected in whole steps).
    pub fn integer(&self) -> bool {
        self.values.iter().all(|v| v.parse::<i64>().is_ok())
    }
}

/// The values of `KEY=V1,V2,…`, split at commas outside brackets, braces and
/// quotes. A quote opens only where a value (or a list item) starts, so an
/// apostrophe inside a word (`it's`) is a letter; an unclosed quote is an
/// error.
fn split_values(text: &str) -> Result<Vec<String>, String> {
    let mut values = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut current = String::new();
    for ch in text.chars() {
        let at_start = current
            .trim_end()
            .chars()
            .last()
            .is_none_or(|c| matches!(c, '[' | '{' | ',' | '='));
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (None, '"' | '\'') if at_start => quote = Some(ch),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                values.push(current.trim().to_string());
                current.clear();
                continue;
            }
            _ => {}
        }
        current.push(ch);
    }
    if let Some(q) = quote {
        return Err(format!(
            "a {q} opens a quoted value that is never closed; close it, or drop it"
        ));
    }
    values.push(current.trim().to_string());
    Ok(values)
}

/// The axes of a sweep and their combinations.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Grid {
    pub axes: Vec<Axis>,
}

impl Grid {
    /// Parses every `--set`; refuses a key given twice and a grid over
    /// [`MAX_VARIANTS`] unless `allow_large` (the [`LARGE_GRID_FLAG`]).
    pub(crate) fn parse(args: &[String], allow_large: bool) -> Result<Grid, PlannerError> {
        let mut axes: Vec<Axis> = Vec::new();
        let mut errors = Vec::new();
        for arg in args {
            match Axis::parse(arg) {
                Ok(axis) if axes.iter().any(|a| a.key == axis.key) => errors.push(format!(
                    "--set `{arg}`: `{}` is swept twice; give all its values in one --set KEY=V1,V2,…",
                    axis.key
                )),
                Ok(axis) => axes.push(axis),
                Err(e) => errors.push(e),
            }
        }
        if !errors.is_empty() {
            return Err(PlannerError::Usage(errors.join("\n")));
        }
        let grid = Grid { axes };
        // Counted without overflow: ten axes of 100 values are 10^20.
        let n = grid
            .axes
            .iter()
            .fold(1u128, |n, a| n.saturating_mul(a.values.len() as u128));
        let shape: Vec<String> = grid
            .axes
            .iter()
            .map(|a| format!("{} ({})", a.values.len(), a.key))
            .collect();
        let count = if n < 1_000_000_000_000 {
            crate::base::numbers::group_thousands(n as i64)
        } else {
            format!("{:.1e}", n as f64)
        };
        if n > MAX_VARIANTS_ALLOWED as u128 {
            return Err(PlannerError::Usage(format!(
                "--set: the sweep grid has {count} variants ({}), over the most a sweep runs even with {LARGE_GRID_FLAG} ({}); each variant is a full solve. Sweep fewer values, or fewer keys at a time",
                shape.join(" × "),
                crate::base::numbers::group_thousands(MAX_VARIANTS_ALLOWED as i64)
            )));
        }
        if n > MAX_VARIANTS as u128 && !allow_large {
            return Err(PlannerError::Usage(format!(
                "--set: the sweep grid has {count} variants ({}), over the limit of {}; each variant is a full solve. Give fewer values, or confirm with {LARGE_GRID_FLAG}",
                shape.join(" × "),
                crate::base::numbers::group_thousands(MAX_VARIANTS as i64)
            )));
        }
        Ok(grid)
    }

    /// Number of variants: the product of the axes' value counts.
    #[cfg(test)]
    pub(crate) fn variant_count(&self) -> usize {
        self.axes
            .iter()
            .map(|a| a.values.len())
            .fold(1usize, usize::saturating_mul)
    }

    /// Every variant, as the index of its value on each axis; the last axis
    /// varies fastest.
    pub(crate) fn variants(&self) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new()];
        for axis in &self.axes {
            out = out
                .into_iter()
                .flat_map(|prefix| {
                    (0..axis.values.len()).map(move |i| {
                        let mut v = prefix.clone();
                        v.push(i);
                        v
                    })
                })
                .collect();
        }
        out
    }

    /// The overrides of one variant.
    pub(crate) fn overrides(&self, variant: &[usize]) -> Vec<Override> {
        self.axes
            .iter()
            .zip(variant)
            .map(|(a, &i)| a.at(&a.values[i]))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(std::string::ToString::to_string).collect()
    }

    #[test]
    fn values_split_at_top_level_commas_only() {
        let a = Axis::parse("gpus[0].tensor_parallel=[2,4], [4,8]").unwrap();
        assert_eq!(a.values, vec!["[2,4]", "[4,8]"]);
        let b = Axis::parse("api.name=\"a,b\",c").unwrap();
        assert_eq!(b.values, vec!["\"a,b\"", "c"]);
        assert!(Axis::parse("x=1,,2").is_err());
        // Issue: `name=it's,x` silently opened a quote (one value).
        assert_eq!(
            Axis::parse("name=it's,x").unwrap().values,
            vec!["it's", "x"]
        );
        let e = Axis::parse("name=\"open,x").unwrap_err();
        assert!(e.contains("never closed"), "{e}");
    }

    #[test]
    fn the_grid_is_every_combination_last_axis_fastest() {
        let g = Grid::parse(&args(&["a=1,2", "b=x,y,z"]), false).unwrap();
        assert_eq!(g.variant_count(), 6);
        let v = g.variants();
        assert_eq!(v.len(), 6);
        assert_eq!(v[0], vec![0, 0]);
        assert_eq!(v[1], vec![0, 1]);
        assert_eq!(v[3], vec![1, 0]);
        let o = g.overrides(&v[5]);
        assert_eq!(o[0].label(), "a=2");
        assert_eq!(o[1].label(), "b=z");
    }

    #[test]
    fn large_grids_need_the_flag() {
        let values: Vec<String> = (0..40).map(|i| i.to_string()).collect();
        let a = format!("a={}", values.join(","));
        let b = format!("b={}", values[..30].join(","));
        let err = Grid::parse(&[a.clone(), b.clone()], false).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("1,200 variants (40 (a) × 30 (b))"), "{msg}");
        assert!(msg.contains(LARGE_GRID_FLAG), "{msg}");
        assert_eq!(err.exit_code(), crate::base::error::EXIT_BAD_INPUT);
        assert_eq!(Grid::parse(&[a, b], true).unwrap().variant_count(), 1200);
    }

    /// Issue: ten axes of 100 values with the flag built every variant in
    /// memory and aborted.
    #[test]
    fn no_flag_lets_a_grid_past_the_ceiling() {
        let hundred: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let axes: Vec<String> = (0..10)
            .map(|k| format!("k{k}={}", hundred.join(",")))
            .collect();
        let msg = Grid::parse(&axes, true).unwrap_err().to_string();
        assert!(msg.contains("1.0e20 variants"), "{msg}");
        assert!(
            msg.contains("even with --allow-large-grid (10,000)"),
            "{msg}"
        );
    }

    #[test]
    fn a_value_listed_twice_is_refused() {
        for arg in [
            "gpus[0].tensor_parallel=[1],[1]",
            "api.usd=1,2,1.0",
            "x=a,b, a",
        ] {
            let e = Axis::parse(arg)
                .err()
                .unwrap_or_else(|| panic!("{arg} accepted"));
            assert!(e.contains("list each value once"), "{arg}: {e}");
        }
        assert!(Axis::parse("api.usd=1,1.5,2").is_ok());
    }

    #[test]
    fn a_key_swept_twice_is_refused() {
        let err = Grid::parse(&args(&["a=1,2", "a=3"]), false).unwrap_err();
        assert!(err.to_string().contains("`a` is swept twice"));
    }

    #[test]
    fn numeric_and_integer_axes() {
        assert!(Axis::parse("a=1,2").unwrap().integer());
        assert!(Axis::parse("a=0.5,2").unwrap().numeric());
        assert!(!Axis::parse("a=0.5,2").unwrap().integer());
        assert!(!Axis::parse("a=fp8,bf16").unwrap().numeric());
    }
}
