//! Inline SVG charts drawn from numbers: a plotting frame with linear or
//! logarithmic axes and nice ticks, step areas, lines, bars and legends.
//! Every mark is a `<path>` so a page can check that its charts drew.

use std::fmt::Write as _;

/// Escapes text for HTML and SVG.
pub fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Round tick values covering [lo, hi]: steps of 1, 2 or 5 × 10^k.
pub fn nice_ticks(lo: f64, hi: f64, count: usize) -> Vec<f64> {
    if hi <= lo || !lo.is_finite() || !hi.is_finite() {
        return vec![lo];
    }
    let raw = (hi - lo) / count.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    let first = (lo / step).ceil() * step;
    let mut ticks = Vec::new();
    let mut v = first;
    while v <= hi + step * 1e-9 {
        ticks.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        v += step;
    }
    ticks
}

/// Powers of ten (and 2×, 5×) covering [lo, hi] for a log axis.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    let mut decade = 10f64.powf(lo.max(1e-9).log10().floor());
    while decade <= hi * 1.0001 {
        for m in [1.0, 2.0, 5.0] {
            let v = m * decade;
            if v >= lo * 0.9999 && v <= hi * 1.0001 {
                ticks.push(v);
            }
        }
        decade *= 10.0;
    }
    ticks
}

/// A tick label: thousands grouped, trailing zeros dropped.
pub fn tick_label(v: f64) -> String {
    if v.abs() >= 1000.0 {
        crate::base::numbers::group_thousands(v.round() as i64)
    } else if v == v.round() {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A plotting area inside an SVG of `width` × `height` pixels.
#[derive(Debug, Clone)]
pub struct Frame {
    pub width: f64,
    pub height: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    x: (f64, f64),
    y: (f64, f64),
    x_log: bool,
}

impl Frame {
    /// A frame for x in `x` and y in `y` (data units).
    pub fn new(width: f64, height: f64, x: (f64, f64), y: (f64, f64)) -> Frame {
        let span = |(lo, hi): (f64, f64)| if hi > lo { (lo, hi) } else { (lo, lo + 1.0) };
        Frame {
            width,
            height,
            left: 64.0,
            right: 16.0,
            top: 14.0,
            bottom: 42.0,
            x: span(x),
            y: span(y),
            x_log: false,
        }
    }

    /// The x axis on a log scale (both bounds must be positive).
    #[must_use]
    pub fn with_log_x(mut self) -> Frame {
        self.x_log = true;
        self.x = (self.x.0.max(1e-6), self.x.1.max(self.x.0.max(1e-6) * 10.0));
        self
    }

    /// Makes room on the left for long labels.
    #[must_use]
    pub fn with_left_margin(mut self, left: f64) -> Frame {
        self.left = left;
        self
    }

    /// Pixel x of data `x`.
    pub fn px(&self, x: f64) -> f64 {
        let (lo, hi) = self.x;
        let t = if self.x_log {
            (x.max(lo).ln() - lo.ln()) / (hi.ln() - lo.ln())
        } else {
            (x - lo) / (hi - lo)
        };
        self.left + t.clamp(0.0, 1.0) * (self.width - self.left - self.right)
    }

    /// Pixel y of data `y`.
    pub fn py(&self, y: f64) -> f64 {
        let (lo, hi) = self.y;
        let t = ((y - lo) / (hi - lo)).clamp(0.0, 1.0);
        self.height - self.bottom - t * (self.height - self.top - self.bottom)
    }

    /// Opens the `<svg>` element of chart `id`, titled for screen readers.
    pub fn open(&self, id: &str, title: &str) -> String {
        format!(
            "<svg class=\"chart\" id=\"{}\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{t}\" xmlns=\"http://www.w3.org/2000/svg\"><title>{t}</title>",
            esc(id),
            w = self.width,
            h = self.height,
            t = esc(title)
        )
    }

    /// Grid lines, ticks and axis titles.
    pub fn axes(
        &self,
        x_ticks: &[(f64, String)],
        y_ticks: &[f64],
        x_title: &str,
        y_title: &str,
    ) -> String {
        let mut o = String::new();
        let (x_lo, x_hi) = (self.left, self.width - self.right);
        let (y_lo, y_hi) = (self.height - self.bottom, self.top);
        for &v in y_ticks {
            let y = self.py(v);
            let _ = write!(
                o,
                "<path class=\"grid\" d=\"M{x_lo:.1},{y:.1}H{x_hi:.1}\"/><text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                x_lo - 6.0,
                y + 4.0,
                esc(&tick_label(v))
            );
        }
        for (v, label) in x_ticks {
            let x = self.px(*v);
            let _ = write!(
                o,
                "<path class=\"tickmark\" d=\"M{x:.1},{y_lo:.1}v5\"/><text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                y_lo + 18.0,
                esc(label)
            );
        }
        let _ = write!(
            o,
            "<path class=\"axis\" d=\"M{x_lo:.1},{y_hi:.1}V{y_lo:.1}H{x_hi:.1}\"/><text class=\"axis-title\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text><text class=\"axis-title\" transform=\"translate(14,{:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            f64::midpoint(x_lo, x_hi),
            self.height - 6.0,
            esc(x_title),
            f64::midpoint(y_lo, y_hi),
            esc(y_title)
        );
        o
    }

    /// The path data of a step line over slots: `M`, then one flat segment
    /// per slot (x in slot units from `x0`).
    fn step_path(&self, x0: f64, ys: &[f64]) -> String {
        let mut d = String::new();
        for (i, &v) in ys.iter().enumerate() {
            let (a, b) = (self.px(x0 + i as f64), self.px(x0 + i as f64 + 1.0));
            let y = self.py(v);
            let _ = write!(
                d,
                "{}{a:.1},{y:.1}L{b:.1},{y:.1}",
                if i == 0 { "M" } else { "L" }
            );
        }
        d
    }

    /// A filled band between `lower` and `upper`, constant over each slot
    /// `[i, i + 1)` (x in slot units from `x0`).
    pub fn step_band(&self, x0: f64, lower: &[f64], upper: &[f64], class: &str) -> String {
        if upper.is_empty() {
            return String::new();
        }
        let mut d = self.step_path(x0, upper);
        for (i, &l) in lower.iter().enumerate().rev() {
            let (a, b) = (self.px(x0 + i as f64), self.px(x0 + i as f64 + 1.0));
            let y = self.py(l);
            let _ = write!(d, "L{b:.1},{y:.1}L{a:.1},{y:.1}");
        }
        format!("<path class=\"{class}\" d=\"{d}Z\"/>")
    }

    /// A step line over slots (x in slot units from `x0`).
    pub fn step_line(&self, x0: f64, ys: &[f64], class: &str) -> String {
        let d = self.step_path(x0, ys);
        format!("<path class=\"{class}\" d=\"{d}\"/>")
    }

    /// A polyline through `(x, y)` points, with dots.
    pub fn line(&self, points: &[(f64, f64)], class: &str, dots: bool) -> String {
        let mut d = String::new();
        for (i, &(x, y)) in points.iter().enumerate() {
            let _ = write!(
                d,
                "{}{:.1},{:.1}",
                if i == 0 { "M" } else { "L" },
                self.px(x),
                self.py(y)
            );
        }
        let mut o = format!("<path class=\"{class}\" d=\"{d}\"/>");
        if dots {
            for &(x, y) in points {
                let (px, py) = (self.px(x), self.py(y));
                let _ = write!(
                    o,
                    "<path class=\"{class} dot\" d=\"M{:.1},{py:.1}a3,3 0 1,0 6,0a3,3 0 1,0 -6,0\"/>",
                    px - 3.0
                );
            }
        }
        o
    }

    /// A vertical rule at data `x`, labelled at the top, or near the
    /// bottom when `label_low`; the label sits on the side with room.
    pub fn vertical(&self, x: f64, class: &str, label: &str, label_low: bool) -> String {
        let px = self.px(x);
        let right_half = px > (self.left + self.width - self.right) / 2.0;
        let (lx, anchor) = if right_half {
            (px - 4.0, "end")
        } else {
            (px + 4.0, "start")
        };
        let ly = if label_low {
            self.height - self.bottom - 8.0
        } else {
            self.top + 11.0
        };
        format!(
            "<path class=\"{class}\" d=\"M{px:.1},{:.1}V{:.1}\"/><text class=\"rule-label\" x=\"{lx:.1}\" y=\"{ly:.1}\" text-anchor=\"{anchor}\">{}</text>",
            self.top,
            self.height - self.bottom,
            esc(label)
        )
    }

    /// A horizontal rule at data `y`, labelled at the left, just below it.
    pub fn horizontal(&self, y: f64, class: &str, label: &str) -> String {
        let py = self.py(y);
        format!(
            "<path class=\"{class}\" d=\"M{:.1},{py:.1}H{:.1}\"/><text class=\"rule-label\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            self.left,
            self.width - self.right,
            self.left + 4.0,
            py + 12.0,
            esc(label)
        )
    }

    /// A shaded vertical band between data `x0` and `x1`.
    pub fn band(&self, x0: f64, x1: f64, class: &str) -> String {
        let (a, b) = (self.px(x0), self.px(x1).max(self.px(x0) + 2.0));
        format!(
            "<path class=\"{class}\" d=\"M{a:.1},{:.1}H{b:.1}V{:.1}H{a:.1}Z\"/>",
            self.top,
            self.height - self.bottom
        )
    }
}

/// A legend: one swatch and label per entry, in a row.
pub fn legend(entries: &[(&str, &str)]) -> String {
    let mut o = String::from("<div class=\"legend\">");
    for (class, label) in entries {
        let _ = write!(
            o,
            "<span><svg width=\"14\" height=\"14\" aria-hidden=\"true\"><path class=\"{class} swatch\" d=\"M1,1H13V13H1Z\"/></svg>{}</span>",
            esc(label)
        );
    }
    o.push_str("</div>");
    o
}

/// Horizontal bars, one per `(label, value, class)`, with the value
/// printed at the end of each bar.
pub fn bars(id: &str, title: &str, rows: &[(String, f64, &str)], unit: &str) -> String {
    let width = 1000.0;
    let row_h = 28.0;
    let height = 30.0 + row_h * rows.len() as f64 + 30.0;
    let max = rows.iter().map(|r| r.1).fold(0.0, f64::max).max(1e-9);
    let label_w = 200.0;
    let frame = Frame::new(width, height, (0.0, max * 1.18), (0.0, 1.0)).with_left_margin(label_w);
    let mut o = frame.open(id, title);
    let ticks: Vec<(f64, String)> = nice_ticks(0.0, max * 1.18, 5)
        .into_iter()
        .map(|v| (v, tick_label(v)))
        .collect();
    for (v, _) in &ticks {
        let x = frame.px(*v);
        let _ = write!(
            o,
            "<path class=\"grid\" d=\"M{x:.1},14V{:.1}\"/>",
            height - 42.0
        );
    }
    for (i, (label, value, class)) in rows.iter().enumerate() {
        let y = 20.0 + row_h * i as f64;
        let x1 = frame.px(*value).max(label_w + 1.0);
        let _ = write!(
            o,
            "<text class=\"bar-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><path class=\"{class}\" d=\"M{label_w:.1},{y:.1}H{x1:.1}V{:.1}H{label_w:.1}Z\"/><text class=\"bar-value\" x=\"{:.1}\" y=\"{:.1}\">{} {}</text>",
            label_w - 8.0,
            y + 15.0,
            esc(label),
            y + 20.0,
            x1 + 6.0,
            y + 15.0,
            esc(&crate::base::numbers::usd(*value)),
            esc(unit)
        );
    }
    o.push_str(&frame.axes(&ticks, &[], unit, ""));
    o.push_str("</svg>");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(
            nice_ticks(0.0, 10.0, 5),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        let labels: Vec<String> = nice_ticks(0.0, 1.0, 5)
            .into_iter()
            .map(tick_label)
            .collect();
        assert_eq!(labels, vec!["0", "0.2", "0.4", "0.6", "0.8", "1"]);
        assert_eq!(
            log_ticks(3.0, 600.0),
            vec![5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0]
        );
        assert_eq!(tick_label(2500.0), "2,500");
        assert_eq!(tick_label(0.25), "0.25");
    }

    #[test]
    fn frame_maps_data_to_pixels() {
        let f = Frame::new(200.0, 100.0, (0.0, 10.0), (0.0, 1.0));
        assert_eq!(f.px(0.0), 64.0);
        assert_eq!(f.px(10.0), 184.0);
        assert_eq!(f.py(0.0), 58.0);
        assert_eq!(f.py(1.0), 14.0);
        let f = Frame::new(200.0, 100.0, (0.0, 2.0), (0.0, 1.0));
        let band = f.step_band(0.0, &[0.0, 0.0], &[1.0, 0.5], "a");
        assert!(
            band.starts_with("<path class=\"a\" d=\"M64.0,14.0L124.0,14.0L124.0,36.0"),
            "{band}"
        );
        assert_eq!(esc("a<b&\"c\""), "a&lt;b&amp;&quot;c&quot;");
    }
}
