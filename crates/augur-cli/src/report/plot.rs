//! Plots as standalone SVG: line charts (optionally log-scaled) and grouped
//! bar charts. Written by hand rather than through a plotting crate so the
//! output needs no fonts or native libraries and is byte-identical for the
//! same data (plots are committed beside the README).

use std::fmt::Write;

/// What a plot draws.
#[derive(Clone, Debug)]
pub enum Kind {
    /// One line with markers per series, over numeric x.
    Lines,
    /// One bar per series in each category; a point's x is the category's
    /// index.
    Bars {
        /// Category labels, left to right.
        categories: Vec<String>,
    },
}

/// One series: a label for the legend and its points.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// `(x, y)` points; for bar charts x is the category index.
    pub points: Vec<(f64, f64)>,
}

/// A plot, ready to render.
#[derive(Clone, Debug)]
pub struct Plot {
    /// File-name part: `<experiment>-<name>.svg`.
    pub name: String,
    /// The title above the chart.
    pub title: String,
    /// The x axis' label.
    pub x_label: String,
    /// The y axis' label.
    pub y_label: String,
    /// Logarithmic x (line charts only).
    pub x_log: bool,
    /// Logarithmic y.
    pub y_log: bool,
    /// Lines or bars.
    pub kind: Kind,
    /// The data.
    pub series: Vec<Series>,
}

const W: f64 = 760.0;
const H: f64 = 460.0;
const LEFT: f64 = 84.0;
const RIGHT: f64 = 24.0;
const TOP: f64 = 48.0;
const BOTTOM: f64 = 64.0;
/// The bottom margin when bar labels are set at a slant.
const BOTTOM_SLANTED: f64 = 120.0;
const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#7f7f7f",
];

impl Plot {
    /// A line chart.
    pub fn lines(name: &str, title: &str, x_label: &str, y_label: &str) -> Plot {
        Plot {
            name: name.into(),
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            x_log: false,
            y_log: false,
            kind: Kind::Lines,
            series: Vec::new(),
        }
    }

    /// A grouped bar chart over `categories`.
    pub fn bars(name: &str, title: &str, categories: &[String], y_label: &str) -> Plot {
        Plot {
            kind: Kind::Bars {
                categories: categories.to_vec(),
            },
            ..Plot::lines(name, title, "", y_label)
        }
    }

    /// Log-scaled axes.
    pub fn log(mut self, x: bool, y: bool) -> Plot {
        self.x_log = x;
        self.y_log = y;
        self
    }

    /// Adds a series; points with a non-finite coordinate, or a
    /// non-positive one on a log axis, are left out.
    pub fn series(mut self, label: &str, points: impl IntoIterator<Item = (f64, f64)>) -> Plot {
        let (xl, yl) = (self.x_log, self.y_log);
        let ok = |v: f64, log: bool| v.is_finite() && (!log || v > 0.0);
        self.series.push(Series {
            label: label.into(),
            points: points
                .into_iter()
                .filter(|&(x, y)| ok(x, xl) && ok(y, yl))
                .collect(),
        });
        self
    }

    /// The plot as an SVG document.
    pub fn svg(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="Helvetica, Arial, sans-serif" font-size="12">"#
        );
        let _ = writeln!(out, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
        let _ = writeln!(
            out,
            r#"<text x="{}" y="26" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
            W / 2.0,
            esc(&self.title)
        );
        let y_axis = Axis::fit(self.all(|p| p.1), self.y_log, true);
        match &self.kind {
            Kind::Lines => {
                let x_axis = Axis::fit(self.all(|p| p.0), self.x_log, false);
                self.frame(&mut out, &y_axis);
                self.x_ticks(&mut out, &x_axis);
                self.draw_lines(&mut out, &x_axis, &y_axis);
            }
            Kind::Bars { categories } => {
                self.frame(&mut out, &y_axis);
                self.draw_bars(&mut out, categories, &y_axis);
            }
        }
        self.legend(&mut out);
        out.push_str("</svg>\n");
        out
    }

    /// Bar labels slant when there are too many to fit side by side.
    fn slanted(&self) -> bool {
        matches!(&self.kind, Kind::Bars { categories } if categories.len() > 6)
    }

    /// The plot area's bottom edge.
    fn base(&self) -> f64 {
        H - if self.slanted() {
            BOTTOM_SLANTED
        } else {
            BOTTOM
        }
    }

    fn all(&self, f: impl Fn(&(f64, f64)) -> f64) -> Vec<f64> {
        self.series
            .iter()
            .flat_map(|s| s.points.iter().map(&f))
            .collect()
    }

    /// Plot area, y grid and ticks, axis labels.
    fn frame(&self, out: &mut String, y: &Axis) {
        let (x0, x1, y0, y1) = (LEFT, W - RIGHT, TOP, self.base());
        for &(v, ref label) in &y.ticks {
            let py = y.map(v, y1, y0);
            let _ = writeln!(
                out,
                r##"<line x1="{x0}" y1="{py:.1}" x2="{x1}" y2="{py:.1}" stroke="#e0e0e0"/><text x="{:.1}" y="{:.1}" text-anchor="end">{label}</text>"##,
                x0 - 6.0,
                py + 4.0
            );
        }
        let _ = writeln!(
            out,
            r##"<rect x="{x0}" y="{y0}" width="{}" height="{}" fill="none" stroke="#444"/>"##,
            x1 - x0,
            y1 - y0
        );
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            (x0 + x1) / 2.0,
            H - 18.0,
            esc(&self.x_label)
        );
        let _ = writeln!(
            out,
            r#"<text transform="translate(18 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            (y0 + y1) / 2.0,
            esc(&self.y_label)
        );
    }

    fn x_ticks(&self, out: &mut String, x: &Axis) {
        let (y1, x0, x1) = (self.base(), LEFT, W - RIGHT);
        for &(v, ref label) in &x.ticks {
            let px = x.map(v, x0, x1);
            let _ = writeln!(
                out,
                r##"<line x1="{px:.1}" y1="{y1}" x2="{px:.1}" y2="{:.1}" stroke="#444"/><text x="{px:.1}" y="{:.1}" text-anchor="middle">{label}</text>"##,
                y1 + 5.0,
                y1 + 19.0
            );
        }
    }

    fn draw_lines(&self, out: &mut String, x: &Axis, y: &Axis) {
        for (i, s) in self.series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .map(|&(px, py)| (x.map(px, LEFT, W - RIGHT), y.map(py, self.base(), TOP)))
                .collect();
            let path: Vec<String> = pts
                .iter()
                .map(|p| format!("{:.1},{:.1}", p.0, p.1))
                .collect();
            let dash = if i % 2 == 1 {
                r#" stroke-dasharray="6 3""#
            } else {
                ""
            };
            let _ = writeln!(
                out,
                r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"{dash}/>"#,
                path.join(" ")
            );
            for p in pts {
                let _ = writeln!(
                    out,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{color}"/>"#,
                    p.0, p.1
                );
            }
        }
    }

    fn draw_bars(&self, out: &mut String, categories: &[String], y: &Axis) {
        let n = categories.len().max(1) as f64;
        let slot = (W - RIGHT - LEFT) / n;
        let k = self.series.len().max(1) as f64;
        let bar = slot * 0.8 / k;
        let base = self.base();
        for (c, label) in categories.iter().enumerate() {
            let cx = LEFT + slot * (c as f64 + 0.5);
            let _ = if self.slanted() {
                writeln!(
                    out,
                    r#"<text transform="translate({cx:.1} {:.1}) rotate(-35)" text-anchor="end">{}</text>"#,
                    base + 14.0,
                    esc(label)
                )
            } else {
                writeln!(
                    out,
                    r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                    base + 18.0,
                    esc(label)
                )
            };
        }
        for (i, s) in self.series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            for &(cx, v) in &s.points {
                let left = LEFT + slot * (cx + 0.1) + bar * i as f64;
                let top = y.map(v, base, TOP);
                let _ = writeln!(
                    out,
                    r#"<rect x="{left:.1}" y="{top:.1}" width="{bar:.1}" height="{:.1}" fill="{color}"><title>{}: {}</title></rect>"#,
                    (base - top).max(0.0),
                    esc(&s.label),
                    short(v)
                );
            }
        }
    }

    /// The legend, top left, on a white box so data under it stays apart.
    fn legend(&self, out: &mut String) {
        if self.series.is_empty() {
            return;
        }
        let longest = self
            .series
            .iter()
            .map(|s| s.label.chars().count())
            .max()
            .unwrap_or(0);
        let _ = writeln!(
            out,
            r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="white" fill-opacity="0.85" stroke="#ccc"/>"##,
            LEFT + 6.0,
            TOP + 4.0,
            28.0 + 7.0 * longest as f64,
            8.0 + 18.0 * self.series.len() as f64
        );
        for (i, s) in self.series.iter().enumerate() {
            let (x, y) = (LEFT + 12.0, TOP + 16.0 + 18.0 * i as f64);
            let color = COLORS[i % COLORS.len()];
            let _ = writeln!(
                out,
                r#"<rect x="{x}" y="{:.1}" width="14" height="10" fill="{color}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
                y - 9.0,
                x + 20.0,
                y,
                esc(&s.label)
            );
        }
    }
}

/// An axis: its range (in log10 units when logarithmic) and ticks.
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    ticks: Vec<(f64, String)>,
}

impl Axis {
    /// Fits `values`; a y axis starts at zero when linear. Ticks are in
    /// data units; `lo` and `hi` in log10 units when logarithmic.
    fn fit(values: Vec<f64>, log: bool, from_zero: bool) -> Axis {
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi) = if lo.is_finite() {
            (lo, hi)
        } else {
            (1.0, 10.0)
        };
        if log {
            let (a, b) = (
                lo.log10().floor(),
                hi.log10().ceil().max(lo.log10().floor() + 1.0),
            );
            let ticks = (a as i32..=b as i32)
                .map(|e| (10f64.powi(e), short(10f64.powi(e))))
                .collect();
            return Axis {
                lo: a,
                hi: b,
                log,
                ticks,
            };
        }
        let lo = if from_zero { lo.min(0.0) } else { lo };
        // Headroom, so the highest point does not touch the frame (and the
        // legend has room above the data).
        let hi = if hi <= lo {
            lo + 1.0
        } else {
            hi + 0.15 * (hi - lo)
        };
        let step = nice_step((hi - lo) / 5.0);
        let (a, b) = ((lo / step).floor() * step, (hi / step).ceil() * step);
        let ticks = (0..=((b - a) / step).round() as i64)
            .map(|i| a + step * i as f64)
            .map(|v| (v, short(v)))
            .collect();
        Axis {
            lo: a,
            hi: b,
            log,
            ticks,
        }
    }

    /// Maps a data value to pixels between `from` and `to`.
    fn map(&self, v: f64, from: f64, to: f64) -> f64 {
        let t = if self.log { v.log10() } else { v };
        from + (t - self.lo) / (self.hi - self.lo) * (to - from)
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
fn nice_step(raw: f64) -> f64 {
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p)
}

/// A short label: `1.5k`, `12M`, `0.25`.
fn short(v: f64) -> String {
    let a = v.abs();
    let (div, suffix) = match a {
        a if a >= 1e9 => (1e9, "G"),
        a if a >= 1e6 => (1e6, "M"),
        a if a >= 1e4 => (1e3, "k"),
        _ => (1.0, ""),
    };
    let x = v / div;
    let s = if x.fract().abs() < 1e-9 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        // Two significant digits: 0.25, 0.015, 0.001.
        let digits = (1.0 - x.abs().log10().floor()) as usize;
        format!("{x:.digits$}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    format!("{s}{suffix}")
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_labels() {
        assert_eq!(short(0.0), "0");
        assert_eq!(short(0.25), "0.25");
        assert_eq!(short(1500.0), "1500");
        assert_eq!(short(15000.0), "15k");
        assert_eq!(short(12_582_912.0), "12.6M");
        assert_eq!(short(100.0), "100");
        assert_eq!(short(0.001), "0.001");
        assert_eq!(short(0.015), "0.015");
        assert_eq!(short(0.005), "0.005");
    }

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(0.3), 0.5);
        assert_eq!(nice_step(7.0), 10.0);
        assert_eq!(nice_step(1.0), 1.0);
        assert_eq!(nice_step(130.0), 200.0);
    }

    #[test]
    fn log_axis_ticks_cover_the_data() {
        let a = Axis::fit(vec![3.0, 4000.0], true, false);
        let labels: Vec<&str> = a.ticks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(labels, ["1", "10", "100", "1000", "10k"]);
        // 100 lies in the middle of 1..10k.
        assert!((a.map(100.0, 0.0, 400.0) - 200.0).abs() < 1e-9);
    }

    #[test]
    fn line_plot_has_one_marker_per_kept_point() {
        let p = Plot::lines("p", "P & Q", "n", "runs")
            .log(true, true)
            .series("ours", [(1.0, 2.0), (2.0, 3.0), (0.0, 4.0)])
            .series("theirs", [(1.0, 3.0), (2.0, 5.0)]);
        let svg = p.svg();
        assert_eq!(svg.matches("<circle").count(), 4);
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("P &amp; Q"));
        assert_eq!(svg, p.svg(), "rendering is deterministic");
    }

    #[test]
    fn bars_are_as_tall_as_their_values() {
        let cats = vec!["a".to_string(), "b".to_string()];
        let svg = Plot::bars("b", "B", &cats, "bytes")
            .series("x", [(0.0, 10.0), (1.0, 5.0)])
            .svg();
        // The bars are the rectangles with a tooltip.
        let heights: Vec<f64> = svg
            .lines()
            .filter(|l| l.contains("<title>"))
            .filter_map(|l| l.split("height=\"").nth(1)?.split('"').next()?.parse().ok())
            .collect();
        assert_eq!(heights.len(), 2, "{svg}");
        assert!((heights[0] - 2.0 * heights[1]).abs() < 0.2, "{heights:?}");
    }
}
