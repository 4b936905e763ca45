//! The last check before a result is printed: every number in it is finite,
//! and no cost, price or latency is negative. JSON would print a NaN or an
//! infinity as `null`, and text as `NaN`/`inf`; a figure like that comes from
//! an input at the edge of its range and is refused with the field's path
//! instead of being printed.
//!
//! [`check`] walks any `Serialize` value (the same data the JSON report holds)
//! with a serializer that writes nothing and only looks at the numbers.

use serde::ser::{self, Serialize};
use std::fmt;

/// A figure that may not be printed, with its path in the report.
#[derive(Debug, Clone, PartialEq)]
pub struct BadFigure {
    /// Dotted path, e.g. `tiers.chat.cost_per_1k_goodput_tokens_usd`.
    pub path: String,
    pub value: f64,
}

impl fmt::Display for BadFigure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.value.is_finite() {
            write!(f, "`{}` came out negative ({})", self.path, self.value)
        } else {
            write!(f, "`{}` came out as {}", self.path, self.value)
        }
    }
}

/// The first non-finite number in `value`, or negative number under a key
/// naming a cost, price or latency.
pub(crate) fn check<T: Serialize + ?Sized>(value: &T) -> Result<(), BadFigure> {
    let mut walker = Walker {
        path: Vec::new(),
        bad: None,
    };
    let _ = value.serialize(&mut walker);
    match walker.bad {
        None => Ok(()),
        Some(b) => Err(b),
    }
}

/// Keys whose numbers may never be negative.
fn non_negative(key: &str) -> bool {
    [
        "cost", "usd", "price", "_ms", "_s", "latency", "tokens", "rps", "gpus",
    ]
    .iter()
    .any(|k| key.contains(k))
        && !key.contains("saving")
        && !key.contains("delta")
        && !key.contains("error")
}

struct Walker {
    path: Vec<String>,
    bad: Option<BadFigure>,
}

#[derive(Debug)]
struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("stop")
    }
}

impl std::error::Error for Stop {}

impl ser::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stop
    }
}

impl Walker {
    fn number(&mut self, v: f64) -> Result<(), Stop> {
        let key = self.path.last().map_or("", String::as_str);
        if !v.is_finite() || (v < 0.0 && non_negative(key)) {
            self.bad = Some(BadFigure {
                path: self.path.join("."),
                value: v,
            });
            return Err(Stop);
        }
        Ok(())
    }

    fn nested<T: Serialize + ?Sized>(&mut self, key: String, value: &T) -> Result<(), Stop> {
        self.path.push(key);
        let r = value.serialize(&mut *self);
        self.path.pop();
        r
    }
}

macro_rules! ok {
    ($($name:ident($t:ty)),*) => {
        $(fn $name(self, _: $t) -> Result<(), Stop> { Ok(()) })*
    };
}

impl<'a> ser::Serializer for &'a mut Walker {
    type Ok = ();
    type Error = Stop;
    type SerializeSeq = Seq<'a>;
    type SerializeTuple = Seq<'a>;
    type SerializeTupleStruct = Seq<'a>;
    type SerializeTupleVariant = Seq<'a>;
    type SerializeMap = Map<'a>;
    type SerializeStruct = Map<'a>;
    type SerializeStructVariant = Map<'a>;

    ok!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_unit_struct(&'static str)
    );

    fn serialize_i32(self, v: i32) -> Result<(), Stop> {
        self.number(f64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<(), Stop> {
        self.number(v as f64)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Stop> {
        self.number(f64::from(v))
    }
    fn serialize_f64(self, v: f64) -> Result<(), Stop> {
        self.number(v)
    }
    fn serialize_none(self) -> Result<(), Stop> {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Stop> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Stop> {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Stop> {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Stop> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Stop> {
        self.nested(variant.to_string(), v)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Seq<'a>, Stop> {
        Ok(Seq { w: self, i: 0 })
    }
    fn serialize_tuple(self, _: usize) -> Result<Seq<'a>, Stop> {
        Ok(Seq { w: self, i: 0 })
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Seq<'a>, Stop> {
        Ok(Seq { w: self, i: 0 })
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Seq<'a>, Stop> {
        Ok(Seq { w: self, i: 0 })
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Map<'a>, Stop> {
        Ok(Map { w: self, key: None })
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Map<'a>, Stop> {
        Ok(Map { w: self, key: None })
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Map<'a>, Stop> {
        Ok(Map { w: self, key: None })
    }
}

struct Seq<'a> {
    w: &'a mut Walker,
    i: usize,
}

impl Seq<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Stop> {
        // An element keeps its list's key, with the index: `p99_ms[3]`.
        let key = format!("{}[{}]", self.w.path.pop().unwrap_or_default(), self.i);
        self.i += 1;
        let r = self.w.nested(key.clone(), v);
        let list = key[..key.rfind('[').unwrap_or(key.len())].to_string();
        self.w.path.push(list);
        r
    }
}

macro_rules! seq {
    ($($tr:ident :: $f:ident),*) => {$(
        impl ser::$tr for Seq<'_> {
            type Ok = ();
            type Error = Stop;
            fn $f<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Stop> {
                self.element(v)
            }
            fn end(self) -> Result<(), Stop> {
                Ok(())
            }
        }
    )*};
}
seq!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

struct Map<'a> {
    w: &'a mut Walker,
    key: Option<String>,
}

impl ser::SerializeMap for Map<'_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, k: &T) -> Result<(), Stop> {
        self.key = Some(
            serde_json::to_string(k)
                .map_or_else(|_| "?".into(), |s| s.trim_matches('"').to_string()),
        );
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Stop> {
        let key = self.key.take().unwrap_or_default();
        self.w.nested(key, v)
    }
    fn end(self) -> Result<(), Stop> {
        Ok(())
    }
}

macro_rules! fields {
    ($($tr:ident),*) => {$(
        impl ser::$tr for Map<'_> {
            type Ok = ();
            type Error = Stop;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                v: &T,
            ) -> Result<(), Stop> {
                self.w.nested(key.to_string(), v)
            }
            fn end(self) -> Result<(), Stop> {
                Ok(())
            }
        }
    )*};
}
fields!(SerializeStruct, SerializeStructVariant);

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[derive(serde::Serialize)]
    struct Tier {
        ttft_p99_ms: Vec<f64>,
        cost_usd: Option<f64>,
        saving_usd: f64,
    }

    #[test]
    fn finds_the_path_of_a_bad_figure() {
        let mut tiers = BTreeMap::new();
        tiers.insert(
            "chat",
            Tier {
                ttft_p99_ms: vec![1.0, f64::INFINITY],
                cost_usd: None,
                saving_usd: -3.0,
            },
        );
        let bad = check(&tiers).unwrap_err();
        assert_eq!(bad.path, "chat.ttft_p99_ms[1]");
        tiers.get_mut("chat").unwrap().ttft_p99_ms[1] = 2.0;
        assert!(check(&tiers).is_ok(), "a negative saving is a figure");
        tiers.get_mut("chat").unwrap().cost_usd = Some(-1.0);
        assert_eq!(check(&tiers).unwrap_err().path, "chat.cost_usd");
        assert_eq!(
            check(&vec![f64::NAN]).unwrap_err().to_string(),
            "`[0]` came out as NaN"
        );
    }
}
