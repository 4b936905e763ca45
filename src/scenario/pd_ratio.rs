//! A disaggregated unit's shape as a scenario states it: x prefill replicas
//! and y decode replicas, written `xPyD` (`gpus[].disaggregated`).

use serde::{Deserialize, Serialize};

/// Most replicas on either side of a unit.
pub const MOST_SIDE_REPLICAS: u32 = 16;

/// x prefill and y decode replicas per unit; written `xPyD` in every file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct PdRatio {
    pub prefill: u32,
    pub decode: u32,
}

impl PdRatio {
    /// `xPyD` (case-insensitive, e.g. `1P2D`, `2p1d`) with x and y from 1
    /// to [`MOST_SIDE_REPLICAS`]; the error says what is wrong.
    pub fn parse(text: &str) -> Result<PdRatio, String> {
        let lower = text.trim().to_ascii_lowercase();
        let shape = || {
            format!("`{text}` is not a unit's shape: write it xPyD, x prefill and y decode replicas per unit (for example \"1P2D\")")
        };
        let (x, rest) = lower.split_once('p').ok_or_else(shape)?;
        let y = rest.strip_suffix('d').ok_or_else(shape)?;
        let side = |s: &str, name: &str| -> Result<u32, String> {
            let n: u32 = s.parse().map_err(|_| shape())?;
            if (1..=MOST_SIDE_REPLICAS).contains(&n) {
                Ok(n)
            } else {
                Err(format!(
                    "`{text}`: {n} {name} replicas per unit; give 1 to {MOST_SIDE_REPLICAS}"
                ))
            }
        };
        Ok(PdRatio {
            prefill: side(x, "prefill")?,
            decode: side(y, "decode")?,
        })
    }

    /// `xPyD`.
    pub fn label(self) -> String {
        format!("{}P{}D", self.prefill, self.decode)
    }

    /// Replicas per unit.
    pub fn replicas(self) -> u32 {
        self.prefill + self.decode
    }
}

impl TryFrom<String> for PdRatio {
    type Error = String;
    fn try_from(text: String) -> Result<Self, String> {
        PdRatio::parse(&text)
    }
}

impl From<PdRatio> for String {
    fn from(r: PdRatio) -> String {
        r.label()
    }
}

#[cfg(test)]
mod tests {
    use super::PdRatio;

    #[test]
    fn a_units_shape_reads_as_xpyd_and_says_what_is_wrong() {
        assert_eq!(
            PdRatio::parse("1P2D"),
            Ok(PdRatio {
                prefill: 1,
                decode: 2
            })
        );
        assert_eq!(
            PdRatio::parse(" 3p1d ").map(PdRatio::label),
            Ok("3P1D".into())
        );
        for bad in ["1:2", "P2D", "1P", "xPyD", "1P2", ""] {
            let e = PdRatio::parse(bad).unwrap_err();
            assert!(e.contains("write it xPyD"), "{bad}: {e}");
        }
        let e = PdRatio::parse("0P1D").unwrap_err();
        assert!(e.contains("0 prefill replicas"), "{e}");
        let e = PdRatio::parse("1P17D").unwrap_err();
        assert!(e.contains("17 decode replicas"), "{e}");
    }
}
