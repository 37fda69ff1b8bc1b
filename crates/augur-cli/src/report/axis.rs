//! Plot axes: a range and ticks fitted to the data (whole decades on log
//! axes, 1-2-5 steps from zero with headroom on linear ones), and the tick
//! labels (`12.6M`), as plotters coordinates.

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

/// An axis: its range and ticks, in data units.
pub(super) struct Axis {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) log: bool,
    pub(super) ticks: Vec<f64>,
}

impl Axis {
    /// Fits `values`; a y axis starts at zero when linear. A log axis
    /// spans whole decades, ticked at each.
    pub(super) fn fit(values: Vec<f64>, log: bool, from_zero: bool) -> Axis {
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi) = if lo.is_finite() {
            (lo, hi)
        } else {
            (1.0, 10.0)
        };
        if log {
            let a = lo.log10().floor() as i32;
            let b = (hi.log10().ceil() as i32).max(a + 1);
            let ticks: Vec<f64> = (a..=b).map(|e| 10f64.powi(e)).collect();
            return Axis {
                lo: ticks[0],
                hi: ticks[ticks.len() - 1],
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
            .collect();
        Axis {
            lo: a,
            hi: b,
            log,
            ticks,
        }
    }

    /// Bar slots: category `c` spans `c..c + 1`, no ticks (the categories
    /// are labelled instead).
    pub(super) fn slots(n: usize) -> Axis {
        Axis {
            lo: 0.0,
            hi: n.max(1) as f64,
            log: false,
            ticks: Vec::new(),
        }
    }

    pub(super) fn linear(&self) -> Ticked<RangedCoordf64> {
        Ticked {
            scale: (self.lo..self.hi).into(),
            ticks: self.ticks.clone(),
        }
    }

    pub(super) fn logarithmic(&self) -> Ticked<LogCoord<f64>> {
        Ticked {
            scale: (self.lo..self.hi).log_scale().into(),
            ticks: self.ticks.clone(),
        }
    }
}

/// A plotters coordinate: `scale` maps values to pixels, ticks and their
/// labels are ours.
pub(super) struct Ticked<R> {
    scale: R,
    ticks: Vec<f64>,
}

impl<R: Ranged<ValueType = f64>> Ranged for Ticked<R> {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        self.scale.map(v, limit)
    }

    /// The ticks, and no light grid lines between them.
    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.scale.range()
    }
}

impl<R> ValueFormatter<f64> for Ticked<R> {
    fn format(v: &f64) -> String {
        short(*v)
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
pub(super) fn nice_step(raw: f64) -> f64 {
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * p)
}

/// A short label: `1.5k`, `12M`, `0.25`.
pub(super) fn short(v: f64) -> String {
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
}
