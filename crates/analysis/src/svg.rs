//! Inline SVG line charts: linear or logarithmic axes with readable ticks, several series in
//! distinct colours (one per result), optional min/max bands, a legend. No script needed.

use crate::fmt::esc;
use std::fmt::Write;

/// One colour per result: Tableau 10, then six more distinct ones (dark and saturated, to
/// stand apart from the first ten), so up to 16 series never share a colour.
pub const PALETTE: [&str; 16] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac", "#1b3a5c", "#8c1c13", "#2f6b2f", "#6a3d9a", "#b15928", "#00868b",
];

pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// How an axis maps values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    Linear,
    Log,
    /// Percentiles on a "nines" scale: x = -log10(1 - p/100), so 90, 99, 99.9 are evenly
    /// spaced.
    Nines,
}

/// An axis: scale, label, and how tick values are printed.
#[derive(Clone, Copy)]
pub struct Axis {
    pub scale: Scale,
    pub label: &'static str,
    pub fmt: fn(f64) -> String,
    /// Linear ticks at round multiples of powers of 1024 (byte rates).
    pub binary: bool,
}

/// A series of points (x, y), optionally with a band (x, low, high) behind it.
#[derive(Clone, Debug, Default)]
pub struct Series {
    pub name: String,
    /// Index of the result it belongs to (colour and toggling).
    pub result: usize,
    pub points: Vec<(f64, f64)>,
    pub band: Vec<(f64, f64, f64)>,
    /// Draw as steps (histograms).
    pub step: bool,
    pub dashed: bool,
}

/// A chart.
pub struct Chart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
}

const W: f64 = 640.0;
const H: f64 = 300.0;
const L: f64 = 78.0;
const R: f64 = 24.0;
const T: f64 = 26.0;
const B: f64 = 40.0;

fn tf(s: Scale, v: f64) -> f64 {
    match s {
        Scale::Linear => v,
        Scale::Log => v.max(1e-300).log10(),
        Scale::Nines => -(1.0 - v / 100.0).max(1e-12).log10(),
    }
}

fn inv(s: Scale, t: f64) -> f64 {
    match s {
        Scale::Linear => t,
        Scale::Log => 10f64.powf(t),
        Scale::Nines => 100.0 * (1.0 - 10f64.powf(-t)),
    }
}

fn usable(s: Scale, v: f64) -> bool {
    v.is_finite()
        && match s {
            Scale::Linear => true,
            Scale::Log => v > 0.0,
            Scale::Nines => (0.0..100.0).contains(&v),
        }
}

/// Nice linear ticks (1, 2, 5 x 10^k) covering [lo, hi].
fn linear_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-12);
    let raw = span / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 7.0)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 && out.len() < 20 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

/// Ticks in transformed space.
fn ticks(s: Scale, lo: f64, hi: f64) -> Vec<f64> {
    match s {
        Scale::Linear => linear_ticks(lo, hi),
        Scale::Log => {
            let (a, b) = (lo.floor() as i32, hi.ceil() as i32);
            let mut v: Vec<f64> = (a..=b)
                .map(|e| e as f64)
                .filter(|t| *t >= lo - 1e-9 && *t <= hi + 1e-9)
                .collect();
            if v.len() < 3 {
                // Less than two decades: add 2x and 5x.
                v = (a..=b)
                    .flat_map(|e| [1.0, 2.0, 5.0].map(|m| (m * 10f64.powi(e)).log10()))
                    .filter(|t| *t >= lo - 1e-9 && *t <= hi + 1e-9)
                    .collect();
            }
            if v.len() < 3 {
                // A narrow range: round values, evenly spaced.
                v = linear_ticks(10f64.powf(lo), 10f64.powf(hi))
                    .into_iter()
                    .filter(|x| *x > 0.0)
                    .map(f64::log10)
                    .filter(|t| *t >= lo - 1e-9 && *t <= hi + 1e-9)
                    .collect();
            }
            v
        }
        Scale::Nines => (0..=hi.ceil() as i32)
            .map(|e| e as f64)
            .filter(|t| *t >= lo - 1e-9 && *t <= hi + 1e-9)
            .collect(),
    }
}

fn ticks_of(a: &Axis, lo: f64, hi: f64) -> Vec<f64> {
    if a.binary && a.scale == Scale::Linear && hi > 1024.0 {
        let u = 1024f64.powi((hi.log(1024.0)).floor() as i32);
        return linear_ticks(lo / u, hi / u)
            .into_iter()
            .map(|t| t * u)
            .collect();
    }
    ticks(a.scale, lo, hi)
}

fn range(s: Scale, vals: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in vals.filter(|v| usable(s, *v)) {
        let t = tf(s, v);
        lo = lo.min(t);
        hi = hi.max(t);
    }
    if !lo.is_finite() {
        return None;
    }
    match s {
        Scale::Log => {
            if hi - lo < 1e-9 {
                lo -= 0.5;
                hi += 0.5;
            }
        }
        Scale::Linear => {
            if lo > 0.0 {
                lo = 0.0; // rates and shares start at zero: no exaggerated swings
            }
            if hi - lo < 1e-12 {
                hi = lo + 1.0;
            }
            hi += (hi - lo) * 0.04;
        }
        Scale::Nines => {
            lo = 0.0;
            hi = hi.ceil().max(1.0);
        }
    }
    Some((lo, hi))
}

fn path_of(pts: &[(f64, f64)], step: bool) -> String {
    let mut d = String::with_capacity(pts.len() * 14);
    for (i, (x, y)) in pts.iter().enumerate() {
        if i == 0 {
            let _ = write!(d, "M{x:.1} {y:.1}");
        } else if step {
            // Hold the previous value up to x, then move to the new one.
            let _ = write!(d, "H{x:.1}V{y:.1}");
        } else {
            let _ = write!(d, "L{x:.1} {y:.1}");
        }
    }
    d
}

impl Chart {
    /// Whether there is anything to draw.
    pub fn has_data(&self) -> bool {
        self.series.iter().any(|s| {
            s.points
                .iter()
                .any(|p| usable(self.x.scale, p.0) && usable(self.y.scale, p.1))
        })
    }

    /// The chart as an `<svg>` element, or `None` when there is nothing to draw.
    pub fn render(&self) -> Option<String> {
        self.render_with_x_ticks(&[])
    }

    /// [`Chart::render`] with the x axis's ticks given (position, text), e.g. the values of
    /// a sweep's axis; none: ticks from the scale.
    pub fn render_with_x_ticks(&self, x_ticks: &[(f64, String)]) -> Option<String> {
        self.render_full(x_ticks, &[])
    }

    /// [`Chart::render`] with marks: a dashed vertical line at each x, labelled (a ramp's
    /// end, steady state attained, a departure from it).
    pub fn render_marked(&self, marks: &[(f64, String)]) -> Option<String> {
        self.render_full(&[], marks)
    }

    fn render_full(&self, x_ticks: &[(f64, String)], marks: &[(f64, String)]) -> Option<String> {
        let pts = || self.series.iter().flat_map(|s| s.points.iter());
        let bands = || self.series.iter().flat_map(|s| s.band.iter());
        let (x0, x1) = range(self.x.scale, pts().map(|p| p.0).chain(bands().map(|b| b.0)))?;
        let (y0, y1) = range(
            self.y.scale,
            pts().map(|p| p.1).chain(bands().flat_map(|b| [b.1, b.2])),
        )?;
        let (pw, ph) = (W - L - R, H - T - B);
        let sx = |v: f64| L + (tf(self.x.scale, v) - x0) / (x1 - x0) * pw;
        let sy = |v: f64| T + ph - (tf(self.y.scale, v) - y0) / (y1 - y0) * ph;
        let clampy = |y: f64| y.clamp(T - 2.0, T + ph + 2.0);
        let mut o = String::new();
        // The legend stands right of the plot, never over the data.
        let longest = self
            .series
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(0);
        let lw = if self.series.is_empty() {
            0.0
        } else {
            (longest as f64 * 6.2 + 34.0).min(260.0)
        };
        let _ = write!(
            o,
            "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {H}\" width=\"{}\" height=\"{H}\" role=\"img\" aria-label=\"{}\">",
            W + lw,
            W + lw,
            esc(&self.title)
        );
        let _ = write!(
            o,
            "<text x=\"{}\" y=\"16\" class=\"ct\">{}</text>",
            L,
            esc(&self.title)
        );
        // Grid and ticks.
        o.push_str("<g class=\"grid\">");
        let x_ticks: Vec<(f64, String)> = if x_ticks.is_empty() {
            ticks_of(&self.x, x0, x1)
                .into_iter()
                .map(|t| (t, (self.x.fmt)(inv(self.x.scale, t))))
                .collect()
        } else {
            x_ticks
                .iter()
                .filter(|(v, _)| usable(self.x.scale, *v))
                .map(|(v, text)| (tf(self.x.scale, *v), text.clone()))
                .collect()
        };
        for (t, text) in x_ticks {
            let x = L + (t - x0) / (x1 - x0) * pw;
            let _ = write!(
                o,
                "<line x1=\"{x:.1}\" y1=\"{T}\" x2=\"{x:.1}\" y2=\"{:.1}\"/><text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                T + ph,
                T + ph + 14.0,
                esc(&text)
            );
        }
        for t in ticks_of(&self.y, y0, y1) {
            let y = T + ph - (t - y0) / (y1 - y0) * ph;
            let _ = write!(
                o,
                "<line x1=\"{L}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                L + pw,
                L - 4.0,
                y + 4.0,
                esc(&(self.y.fmt)(inv(self.y.scale, t)))
            );
        }
        o.push_str("</g>");
        let _ = write!(
            o,
            "<rect class=\"frame\" x=\"{L}\" y=\"{T}\" width=\"{pw}\" height=\"{ph}\"/><text class=\"al\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text><text class=\"al\" transform=\"translate(12 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            L + pw / 2.0,
            H - 6.0,
            esc(self.x.label),
            T + ph / 2.0,
            esc(self.y.label)
        );
        // Series.
        for s in &self.series {
            let c = color(s.result);
            let _ = write!(o, "<g class=\"s{}\">", s.result);
            let band: Vec<(f64, f64, f64)> = s
                .band
                .iter()
                .filter(|b| {
                    usable(self.x.scale, b.0)
                        && usable(self.y.scale, b.1)
                        && usable(self.y.scale, b.2)
                })
                .map(|b| (sx(b.0), clampy(sy(b.1)), clampy(sy(b.2))))
                .collect();
            if band.len() > 1 {
                let mut d = String::new();
                for (i, (x, _, hi)) in band.iter().enumerate() {
                    let _ = write!(d, "{}{x:.1} {hi:.1}", if i == 0 { "M" } else { "L" });
                }
                for (x, lo, _) in band.iter().rev() {
                    let _ = write!(d, "L{x:.1} {lo:.1}");
                }
                let _ = write!(
                    o,
                    "<path d=\"{d}Z\" fill=\"{c}\" fill-opacity=\"0.18\" stroke=\"none\"/>"
                );
            }
            let p: Vec<(f64, f64)> = s
                .points
                .iter()
                .filter(|p| usable(self.x.scale, p.0) && usable(self.y.scale, p.1))
                .map(|p| (sx(p.0), clampy(sy(p.1))))
                .collect();
            if p.len() == 1 {
                let _ = write!(
                    o,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{c}\"/>",
                    p[0].0, p[0].1
                );
            } else if !p.is_empty() {
                let dash = if s.dashed {
                    " stroke-dasharray=\"5 3\""
                } else {
                    ""
                };
                let _ = write!(
                    o,
                    "<path d=\"{}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"1.6\"{dash}><title>{}</title></path>",
                    path_of(&p, s.step),
                    esc(&s.name)
                );
            }
            o.push_str("</g>");
        }
        // Marks, over the series.
        for (i, (x, text)) in marks.iter().enumerate() {
            if !usable(self.x.scale, *x) {
                continue;
            }
            let t = tf(self.x.scale, *x);
            if t < x0 || t > x1 {
                continue;
            }
            let px = sx(*x);
            let _ = write!(
                o,
                "<g class=\"mark\"><line x1=\"{px:.1}\" y1=\"{T}\" x2=\"{px:.1}\" y2=\"{:.1}\" stroke=\"#444\" stroke-width=\"1.2\" stroke-dasharray=\"3 3\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\">{}</text></g>",
                T + ph,
                px + 3.0,
                T + 11.0 + 11.0 * (i % 3) as f64,
                esc(text)
            );
        }
        // Legend (right of the plot, one line per series).
        let mut ly = T + 12.0;
        for s in &self.series {
            let c = color(s.result);
            let _ = write!(
                o,
                "<g class=\"s{} lg\"><line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"{c}\" stroke-width=\"3\"{}/><text x=\"{:.1}\" y=\"{:.1}\">{}</text></g>",
                s.result,
                W + 4.0,
                ly - 4.0,
                W + 20.0,
                ly - 4.0,
                if s.dashed { " stroke-dasharray=\"5 3\"" } else { "" },
                W + 24.0,
                ly,
                esc(&s.name)
            );
            ly += 14.0;
        }
        o.push_str("</svg>");
        Some(o)
    }
}

/// A heat map: a grid of cells coloured by value on a logarithmic scale (low: dark blue,
/// high: yellow), each cell labelled with its value, with a colour key. Empty cells (no
/// value) stay blank. Rows are drawn bottom-up (the first row at the bottom).
pub struct HeatMap {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub columns: Vec<String>,
    pub rows: Vec<String>,
    /// `values[row][column]`.
    pub values: Vec<Vec<Option<f64>>>,
    /// How a value is printed in its cell and in the key.
    pub fmt: fn(f64) -> String,
}

/// Colour stops of the heat map (a viridis-like ramp), low to high.
const RAMP: [(u8, u8, u8); 6] = [
    (68, 1, 84),
    (65, 68, 135),
    (42, 120, 142),
    (34, 168, 132),
    (122, 209, 81),
    (253, 231, 37),
];

/// The ramp's colour at `t` in [0, 1], and whether text on it should be dark.
pub fn ramp(t: f64) -> (String, bool) {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (RAMP.len() - 1) as f64;
    let i = (x.floor() as usize).min(RAMP.len() - 2);
    let f = x - i as f64;
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (RAMP[i], RAMP[i + 1]);
    let c = (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2));
    (format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2), t > 0.55)
}

impl HeatMap {
    /// The heat map as an `<svg class="chart heatmap">` element, or `None` without values.
    pub fn render(&self) -> Option<String> {
        let vals: Vec<f64> = self
            .values
            .iter()
            .flatten()
            .flatten()
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        if vals.is_empty() || self.columns.is_empty() || self.rows.is_empty() {
            return None;
        }
        let lo = vals.iter().copied().fold(f64::INFINITY, f64::min).log10();
        let hi = vals.iter().copied().fold(0.0, f64::max).log10();
        let span = (hi - lo).max(1e-9);
        let (nc, nr) = (self.columns.len() as f64, self.rows.len() as f64);
        let (cw, ch) = ((560.0 / nc).clamp(34.0, 64.0), 22.0);
        let (l, t, key) = (70.0, 28.0, 70.0);
        let (pw, ph) = (cw * nc, ch * nr);
        let (w, h) = (l + pw + key + 20.0, t + ph + 44.0);
        let mut o = String::new();
        let _ = write!(
            o,
            "<svg class=\"chart heatmap\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w:.0} {h:.0}\" width=\"{w:.0}\" height=\"{h:.0}\" role=\"img\" aria-label=\"{}\"><text x=\"{l}\" y=\"16\" class=\"ct\">{}</text>",
            esc(&self.title),
            esc(&self.title)
        );
        for (ri, row) in self.values.iter().enumerate() {
            let y = t + ph - (ri as f64 + 1.0) * ch;
            for (ci, v) in row.iter().enumerate() {
                let x = l + ci as f64 * cw;
                let Some(v) = v.filter(|v| v.is_finite() && *v > 0.0) else {
                    continue;
                };
                let (fill, dark) = ramp((v.log10() - lo) / span);
                let _ = write!(
                    o,
                    "<rect class=\"hc\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{cw:.1}\" height=\"{ch:.1}\" fill=\"{fill}\"><title>{} x {}: {}</title></rect><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" style=\"font-size:9.5px;fill:{}\">{}</text>",
                    esc(self.rows.get(ri).map(String::as_str).unwrap_or("")),
                    esc(self.columns.get(ci).map(String::as_str).unwrap_or("")),
                    esc(&(self.fmt)(v)),
                    x + cw / 2.0,
                    y + ch / 2.0 + 3.5,
                    if dark { "#111" } else { "#fff" },
                    esc(&(self.fmt)(v))
                );
            }
        }
        for (ci, c) in self.columns.iter().enumerate() {
            let _ = write!(
                o,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
                l + (ci as f64 + 0.5) * cw,
                t + ph + 14.0,
                esc(c)
            );
        }
        for (ri, r) in self.rows.iter().enumerate() {
            let _ = write!(
                o,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                l - 4.0,
                t + ph - (ri as f64 + 0.5) * ch + 3.5,
                esc(r)
            );
        }
        let _ = write!(
            o,
            "<rect class=\"frame\" x=\"{l}\" y=\"{t}\" width=\"{pw:.1}\" height=\"{ph:.1}\"/><text class=\"al\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text><text class=\"al\" transform=\"translate(12 {:.1}) rotate(-90)\" text-anchor=\"middle\">{}</text>",
            l + pw / 2.0,
            h - 8.0,
            esc(&self.x_label),
            t + ph / 2.0,
            esc(&self.y_label)
        );
        // The colour key: the ramp from the smallest to the largest value (log scale).
        let kx = l + pw + 14.0;
        let steps = 24;
        let kh = ph.max(60.0);
        for i in 0..steps {
            let (fill, _) = ramp((i as f64 + 0.5) / steps as f64);
            let y = t + kh - (i as f64 + 1.0) * kh / steps as f64;
            let _ = write!(
                o,
                "<rect x=\"{kx:.1}\" y=\"{y:.1}\" width=\"12\" height=\"{:.2}\" fill=\"{fill}\"/>",
                kh / steps as f64 + 0.3
            );
        }
        let _ = write!(
            o,
            "<text x=\"{:.1}\" y=\"{:.1}\">{}</text><text x=\"{:.1}\" y=\"{:.1}\">{}</text></svg>",
            kx + 15.0,
            t + 8.0,
            esc(&(self.fmt)(10f64.powf(hi))),
            kx + 15.0,
            t + kh,
            esc(&(self.fmt)(10f64.powf(lo)))
        );
        Some(o)
    }
}

/// Reduce a series to at most `max` points by merging neighbours: the mean of each group for
/// the line and its minimum and maximum for the band (so spikes stay visible).
pub fn downsample(points: &[(f64, f64, f64, f64)], max: usize) -> Vec<(f64, f64, f64, f64)> {
    if points.len() <= max || max == 0 {
        return points.to_vec();
    }
    let per = points.len().div_ceil(max);
    points
        .chunks(per)
        .map(|c| {
            let n = c.len() as f64;
            (
                c.iter().map(|p| p.0).sum::<f64>() / n,
                c.iter().map(|p| p.1).sum::<f64>() / n,
                c.iter().map(|p| p.2).fold(f64::INFINITY, f64::min),
                c.iter().map(|p| p.3).fold(f64::NEG_INFINITY, f64::max),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: f64) -> String {
        format!("{v}")
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(linear_ticks(0.0, 10.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(ticks(Scale::Log, 2.0, 6.0), vec![2.0, 3.0, 4.0, 5.0, 6.0]);
        let t = ticks(Scale::Log, 2.0, 2.9);
        assert!(t.len() >= 2, "{t:?}");
        assert_eq!(ticks(Scale::Nines, 0.0, 3.0), vec![0.0, 1.0, 2.0, 3.0]);
        assert!((inv(Scale::Nines, 3.0) - 99.9).abs() < 1e-9);
    }

    #[test]
    fn renders_series_and_skips_empty_charts() {
        let axis = Axis {
            scale: Scale::Log,
            label: "x",
            fmt: f,
            binary: false,
        };
        let mut c = Chart {
            title: "t <1>".into(),
            x: axis,
            y: Axis {
                scale: Scale::Linear,
                label: "y",
                fmt: f,
                binary: true,
            },
            series: vec![Series {
                name: "a".into(),
                points: vec![(0.0, 1.0)], // not drawable on a log axis
                ..Default::default()
            }],
        };
        assert!(!c.has_data());
        assert!(c.render().is_none());
        c.series[0].points = vec![(10.0, 1.0), (100.0, 3.0), (1000.0, 2.0)];
        c.series[0].band = vec![(10.0, 0.5, 1.5), (1000.0, 1.0, 4.0)];
        let s = c.render().unwrap();
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert!(s.contains("t &lt;1&gt;"));
        assert!(s.contains("<path d=\"M"));
        assert!(s.contains("fill-opacity"));
    }

    #[test]
    fn downsampling_keeps_extremes() {
        let pts: Vec<(f64, f64, f64, f64)> = (0..1000)
            .map(|i| (i as f64, 1.0, 1.0, if i == 500 { 99.0 } else { 1.0 }))
            .collect();
        let d = downsample(&pts, 100);
        assert!(d.len() <= 100);
        assert_eq!(d.iter().map(|p| p.3).fold(0.0, f64::max), 99.0);
    }
}
