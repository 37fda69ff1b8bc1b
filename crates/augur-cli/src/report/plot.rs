//! Plots as standalone SVG, drawn by [`plotters`] through its SVG backend:
//! line charts with a marker per point (either axis optionally
//! logarithmic) and grouped bar charts with category labels, each with a
//! title, axis labels and a legend.
//!
//! plotters lays out and draws the chart (frame, grid, ticks, series,
//! legend, log scales); this module picks what a general plotting library
//! cannot know: ranges and ticks (whole decades on log axes, 1-2-5 steps
//! from zero with headroom on linear ones, labels like `12.6M`), category
//! labels wrapped into their slot, and the legend in the corner that
//! covers the least data. plotters is built without its font and bitmap
//! features: text goes out as SVG `<text>` for the viewer to set, so a plot
//! needs no font files or native libraries, and the same data gives the
//! same bytes (plots are committed beside the README).

use plotters::coord::cartesian::Cartesian2d;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::Axis;

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

const W: u32 = 760;
const H: u32 = 460;
/// Text sizes as plotters takes them; its SVG backend writes 1/1.24 of
/// this as `font-size` (about 12 and 15 px).
const TEXT: f64 = 15.0;
const TITLE: f64 = 19.0;
/// Room left of the plot area for the y ticks and label.
const Y_AREA: u32 = 72;
/// Room under the plot area for the x ticks and label.
const X_AREA: u32 = 46;
const MARGIN: u32 = 12;
const RIGHT: u32 = 24;
/// Gap between the plot area and the first line of a category label.
const CATEGORY_GAP: i32 = 8;
/// Room kept free between neighbouring category labels.
const CATEGORY_PAD: i32 = 6;
/// plotters' line spacing in multi-line text, in font sizes.
const LINE_HEIGHT: f64 = 1.25;
const MARKER: i32 = 3;
const COLORS: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0x7f, 0x7f, 0x7f),
];
const GRID: RGBColor = RGBColor(0xe0, 0xe0, 0xe0);
const FRAME: RGBColor = RGBColor(0x44, 0x44, 0x44);
const LEGEND_BORDER: RGBColor = RGBColor(0xcc, 0xcc, 0xcc);
/// Legend layout, as given to plotters (so the box can be placed before
/// it is drawn): room for a series' sample, and padding.
const LEGEND_SAMPLE: i32 = 28;
const LEGEND_MARGIN: i32 = 8;
/// plotters puts a legend this far inside the plot area's corner.
const LEGEND_INSET: i32 = 5;

/// A rectangle in pixels: left, top, right, bottom.
type PixelBox = (i32, i32, i32, i32);

type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

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
        {
            let root = SVGBackend::with_string(&mut out, (W, H)).into_drawing_area();
            // The backend writes into a String and the text layout is
            // plotters' own estimate, so no step here can fail.
            self.draw(&root)
                .and_then(|()| root.present())
                .expect("drawing an SVG into a string");
        }
        out
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB> {
        root.fill(&WHITE)?;
        let y = Axis::fit(self.all(|p| p.1), self.y_log, true);
        let x = match &self.kind {
            Kind::Lines => Axis::fit(self.all(|p| p.0), self.x_log, false),
            Kind::Bars { categories } => Axis::slots(categories.len()),
        };
        // plotters' coordinate types differ per scale: one chart per pair.
        match (x.log, y.log) {
            (false, false) => self.chart(root, x.linear(), &y, y.linear()),
            (false, true) => self.chart(root, x.linear(), &y, y.logarithmic()),
            (true, false) => self.chart(root, x.logarithmic(), &y, y.linear()),
            (true, true) => self.chart(root, x.logarithmic(), &y, y.logarithmic()),
        }
    }

    fn all(&self, f: impl Fn(&(f64, f64)) -> f64) -> Vec<f64> {
        self.series
            .iter()
            .flat_map(|s| s.points.iter().map(&f))
            .collect()
    }

    /// The chart on coordinates `x` and `y` (`y_axis` is the y axis' fit,
    /// whose bottom is the foot of the bars).
    fn chart<DB, X, Y>(
        &self,
        root: &DrawingArea<DB, Shift>,
        x: X,
        y_axis: &Axis,
        y: Y,
    ) -> DrawResult<DB>
    where
        DB: DrawingBackend,
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
        Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let text: TextStyle = ("sans-serif", TEXT).into_font().into();
        let categories = self.category_lines(root, &text);
        let lines = categories.iter().map(Vec::len).max().unwrap_or(0);
        let x_area = if lines > 0 {
            CATEGORY_GAP as u32 + (lines as f64 * TEXT * LINE_HEIGHT).ceil() as u32
        } else {
            X_AREA
        };
        let mut chart = ChartBuilder::on(root)
            .caption(
                &self.title,
                ("sans-serif", TITLE).into_font().style(FontStyle::Bold),
            )
            .margin(MARGIN)
            .margin_right(RIGHT)
            .x_label_area_size(x_area)
            .y_label_area_size(Y_AREA)
            .build_cartesian_2d(x, y)?;
        let mut mesh = chart.configure_mesh();
        mesh.disable_x_mesh()
            .bold_line_style(GRID)
            .axis_style(FRAME)
            .label_style(text.clone())
            .y_desc(self.y_label.as_str());
        if !self.x_label.is_empty() {
            mesh.x_desc(self.x_label.as_str());
        }
        mesh.draw()?;

        let covered = self.draw_series(&mut chart, y_axis.lo)?;
        let below = text.pos(Pos::new(HPos::Center, VPos::Top));
        for (c, lines) in categories.into_iter().enumerate() {
            let (px, py) = chart.backend_coord(&(c as f64 + 0.5, y_axis.lo));
            let mut label = MultiLineText::<_, String>::new((px, py + CATEGORY_GAP), &below);
            for l in lines {
                label.push_line(l);
            }
            root.draw(&label)?;
        }
        let (xs, ys) = chart.plotting_area().get_pixel_range();
        root.draw(&Rectangle::new(
            [(xs.start, ys.start), (xs.end - 1, ys.end - 1)],
            FRAME.stroke_width(1),
        ))?;

        if self.series.is_empty() {
            return Ok(());
        }
        // The legend's size as plotters will lay it out, to pick its corner.
        let mut legend = MultiLineText::<_, &str>::new((0, 0), &text);
        for s in &self.series {
            legend.push_line(s.label.as_str());
        }
        let (w, h) = legend.estimate_dimension().unwrap_or((0, 0));
        let size = (w + LEGEND_SAMPLE + 2 * LEGEND_MARGIN, h + 2 * LEGEND_MARGIN);
        chart
            .configure_series_labels()
            .position(legend_corner((xs, ys), size, &covered))
            .legend_area_size(LEGEND_SAMPLE)
            .margin(LEGEND_MARGIN)
            .background_style(WHITE.mix(0.85))
            .border_style(LEGEND_BORDER)
            .label_font(text)
            .draw()
    }

    /// Each category's label in lines that fit its slot (none for a line
    /// chart).
    fn category_lines<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        text: &TextStyle,
    ) -> Vec<Vec<String>> {
        let Kind::Bars { categories } = &self.kind else {
            return Vec::new();
        };
        let width = (W - 2 * MARGIN - RIGHT - Y_AREA) as i32;
        let slot = width / categories.len().max(1) as i32 - CATEGORY_PAD;
        let fits = |s: &str| {
            root.estimate_text_size(s, text)
                .map_or(true, |(w, _)| w as i32 <= slot)
        };
        categories.iter().map(|c| wrap(c, fits)).collect()
    }

    /// Draws the series with their legend entries; returns the pixel boxes
    /// the data covers. Bars stand on `foot`.
    fn draw_series<'a, DB, X, Y>(
        &self,
        chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
        foot: f64,
    ) -> Result<Vec<PixelBox>, DrawingAreaErrorKind<DB::ErrorType>>
    where
        DB: DrawingBackend + 'a,
        X: Ranged<ValueType = f64>,
        Y: Ranged<ValueType = f64>,
    {
        let mut covered = Vec::new();
        let k = self.series.len() as f64;
        for (i, s) in self.series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let line = color.stroke_width(2);
            if let Kind::Bars { .. } = self.kind {
                // Series i takes the i-th of k bars in the middle 80% of
                // each slot.
                let bar = |&(c, v): &(f64, f64)| {
                    let left = c + 0.1 + 0.8 / k * i as f64;
                    [(left, foot), (left + 0.8 / k, v)]
                };
                chart
                    .draw_series(
                        s.points
                            .iter()
                            .map(|p| Rectangle::new(bar(p), color.filled())),
                    )?
                    .label(s.label.as_str())
                    .legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled())
                    });
                covered.extend(s.points.iter().map(|p| {
                    let [a, b] = bar(p).map(|c| chart.backend_coord(&c));
                    (a.0.min(b.0), a.1.min(b.1), a.0.max(b.0), a.1.max(b.1))
                }));
                continue;
            }
            // Every other line dashed, so lines that overlap stay apart.
            let dashed = i % 2 == 1;
            let pts = s.points.iter().copied();
            let drawn = if dashed {
                chart.draw_series(DashedLineSeries::new(pts, 7, 4, line))?
            } else {
                chart.draw_series(LineSeries::new(pts, line))?
            };
            drawn.label(s.label.as_str()).legend(move |(x, y)| {
                let sample: DynElement<DB, _> = if dashed {
                    DashedPathElement::new([(0, 0), (20, 0)], 7, 4, line).into_dyn()
                } else {
                    PathElement::new([(0, 0), (20, 0)], line).into_dyn()
                };
                EmptyElement::at((x, y)) + sample + Circle::new((10, 0), MARKER, color.filled())
            });
            chart.draw_series(
                s.points
                    .iter()
                    .map(|&p| Circle::new(p, MARKER, color.filled())),
            )?;
            let px: Vec<(i32, i32)> = s.points.iter().map(|p| chart.backend_coord(p)).collect();
            covered.extend(
                px.iter()
                    .map(|&(x, y)| (x - MARKER, y - MARKER, x + MARKER, y + MARKER)),
            );
            for w in px.windows(2) {
                covered.extend(segment(w[0], w[1]));
            }
        }
        Ok(covered)
    }
}

/// `text` broken at spaces into lines that each `fit` (a word longer than
/// a line gets a line of its own).
fn wrap(text: &str, fits: impl Fn(&str) -> bool) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if fits(&format!("{line} {word}")) => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

/// Pixel boxes along the segment from `a` to `b`, a few pixels apart.
fn segment(a: (i32, i32), b: (i32, i32)) -> impl Iterator<Item = PixelBox> {
    let steps = ((b.0 - a.0).abs().max((b.1 - a.1).abs()) / 4).max(1);
    (0..=steps).map(move |s| {
        let x = a.0 + (b.0 - a.0) * s / steps;
        let y = a.1 + (b.1 - a.1) * s / steps;
        (x - 1, y - 1, x + 1, y + 1)
    })
}

/// The corner of the plot area (`xs`, `ys` in pixels) where a legend of
/// `size` overlaps the fewest `covered` boxes; top left on a tie.
fn legend_corner(
    (xs, ys): (std::ops::Range<i32>, std::ops::Range<i32>),
    (w, h): (i32, i32),
    covered: &[PixelBox],
) -> SeriesLabelPosition {
    let (left, top) = (xs.start + LEGEND_INSET, ys.start + LEGEND_INSET);
    let (right, bottom) = (xs.end - LEGEND_INSET - w, ys.end - LEGEND_INSET - h);
    let corners = [
        (SeriesLabelPosition::UpperLeft, left, top),
        (SeriesLabelPosition::UpperRight, right, top),
        (SeriesLabelPosition::LowerRight, right, bottom),
        (SeriesLabelPosition::LowerLeft, left, bottom),
    ];
    let overlaps = |&(_, x, y): &(SeriesLabelPosition, i32, i32)| {
        covered
            .iter()
            .filter(|&&(x0, y0, x1, y1)| x0 < x + w && x < x1 && y0 < y + h && y < y1)
            .count()
    };
    // min_by_key keeps the first of equals.
    let best = corners
        .iter()
        .min_by_key(|c| overlaps(c))
        .expect("four corners");
    best.0.clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of `svg` that open a `tag` element (plotters writes one
    /// element per line).
    fn elements<'a>(svg: &'a str, tag: &str) -> Vec<&'a str> {
        let open = format!("<{tag} ");
        svg.lines().filter(|l| l.starts_with(&open)).collect()
    }

    fn attr(element: &str, name: &str) -> f64 {
        let key = format!(" {name}=\"");
        let rest = &element[element.find(&key).expect(name) + key.len()..];
        rest[..rest.find('"').unwrap()].parse().unwrap()
    }

    /// Every `<text>`'s content (plotters writes it on its own line).
    fn texts(svg: &str) -> Vec<&str> {
        let lines: Vec<&str> = svg.lines().collect();
        lines
            .windows(2)
            .filter(|w| w[0].starts_with("<text "))
            .map(|w| w[1])
            .collect()
    }

    /// The `fill` SVG gives series `i`'s color.
    fn fill(i: usize) -> String {
        let RGBColor(r, g, b) = COLORS[i];
        format!("fill=\"#{r:02X}{g:02X}{b:02X}\"")
    }

    #[test]
    fn log_axes_are_ticked_at_every_decade() {
        let a = Axis::fit(vec![3.0, 4000.0], true, false);
        assert_eq!(a.ticks, [1.0, 10.0, 100.0, 1000.0, 10000.0]);
        assert_eq!((a.lo, a.hi), (1.0, 10000.0));
        let svg = Plot::lines("p", "P", "n", "ms")
            .log(true, true)
            .series("s", [(3.0, 0.2), (4000.0, 50.0)])
            .svg();
        let labels = texts(&svg);
        for tick in ["1", "10", "100", "1000", "10k", "0.1"] {
            assert!(labels.contains(&tick), "{tick} in {labels:?}");
        }
        // Decades only: no 2, 5 or 20 in between.
        assert!(
            !labels.contains(&"20") && !labels.contains(&"5"),
            "{labels:?}"
        );
    }

    #[test]
    fn a_line_plot_has_its_text_and_one_marker_per_kept_point() {
        let svg = Plot::lines("p", "P & Q", "size", "runs")
            .log(true, true)
            .series("ours", [(1.0, 2.0), (2.0, 3.0), (0.0, 4.0)])
            .series("theirs", [(1.0, 3.0), (2.0, 5.0), (4.0, 9.0)])
            .svg();
        let labels = texts(&svg);
        for want in ["P &amp; Q", "size", "runs", "ours", "theirs"] {
            assert!(labels.contains(&want), "{want} in {labels:?}");
        }
        // A marker per point (x = 0 has no place on a log axis), and one
        // beside each series' legend entry.
        let circles = elements(&svg, "circle");
        let of = |i: usize| circles.iter().filter(|c| c.contains(&fill(i))).count();
        assert_eq!((of(0), of(1)), (2 + 1, 3 + 1), "{circles:?}");
    }

    #[test]
    fn bars_are_as_tall_as_their_values() {
        let cats = vec!["a".to_string(), "b".to_string(), "c".to_string()];
        let svg = Plot::bars("b", "Bytes", &cats, "MB")
            .series("x", [(0.0, 10.0), (1.0, 5.0), (2.0, 2.5)])
            .series("y", [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)])
            .svg();
        let labels = texts(&svg);
        for want in ["Bytes", "MB", "a", "b", "c", "x", "y"] {
            assert!(labels.contains(&want), "{want} in {labels:?}");
        }
        // Each series' color: its bars, then its legend sample.
        let rects = elements(&svg, "rect");
        let bars = |i: usize| -> Vec<f64> {
            let own: Vec<&&str> = rects.iter().filter(|r| r.contains(&fill(i))).collect();
            assert_eq!(own.len(), 3 + 1, "{own:?}");
            own[..3].iter().map(|r| attr(r, "height")).collect()
        };
        let (x, y) = (bars(0), bars(1));
        // The linear axis starts at zero, so heights are proportional.
        assert!((x[0] - 2.0 * x[1]).abs() <= 1.0, "{x:?}");
        assert!((x[1] - 2.0 * x[2]).abs() <= 1.0, "{x:?}");
        assert!((y[2] - 3.0 * y[0]).abs() <= 1.0, "{y:?}");
    }

    #[test]
    fn the_legend_keeps_off_the_data() {
        // Log axes have no headroom: falling data fill the top left
        // corner, rising data the top right.
        let falling: Vec<(f64, f64)> = (0..20)
            .map(|i| 0.15 * i as f64)
            .map(|e| (10f64.powf(e), 10f64.powf(3.0 - e)))
            .collect();
        let rising: Vec<(f64, f64)> = falling.iter().map(|&(x, y)| (x, 1000.0 / y)).collect();
        for points in [falling, rising] {
            let svg = Plot::lines("p", "P", "x", "y")
                .log(true, true)
                .series("a long legend entry", points.iter().copied())
                .series("another one", points.iter().map(|&(x, y)| (x, y * 0.8)))
                .svg();
            let legend = elements(&svg, "rect")
                .into_iter()
                .find(|r| r.contains("opacity=\"0.85\""))
                .expect("a legend box");
            let (x0, y0) = (attr(legend, "x"), attr(legend, "y"));
            let (x1, y1) = (x0 + attr(legend, "width"), y0 + attr(legend, "height"));
            for c in elements(&svg, "circle") {
                let (cx, cy) = (attr(c, "cx"), attr(c, "cy"));
                let inside = x0 <= cx && cx <= x1 && y0 <= cy && cy <= y1;
                // The legend's own samples are the only markers inside.
                assert!(
                    !inside || cx < x0 + LEGEND_SAMPLE as f64,
                    "{c} under {legend}"
                );
            }
        }
    }

    #[test]
    fn category_labels_wrap_at_spaces() {
        let fits = |s: &str| s.len() <= 10;
        assert_eq!(
            wrap("conv-relu fusion enabled *", fits),
            ["conv-relu", "fusion", "enabled *"]
        );
        assert_eq!(wrap("matmul copy-all", |_| true), ["matmul copy-all"]);
        assert_eq!(
            wrap("averyveryverylongword x", fits),
            ["averyveryverylongword", "x"]
        );
    }

    #[test]
    fn the_same_data_gives_the_same_bytes() {
        let cats: Vec<String> = (0..8).map(|i| format!("case {i} of many")).collect();
        let plots = [
            Plot::bars("b", "B", &cats, "ms")
                .log(false, true)
                .series("x", (0..8).map(|i| (i as f64, 1.5 + i as f64)))
                .series("y", (0..8).map(|i| (i as f64, 30.0 / (1.0 + i as f64)))),
            Plot::lines("l", "L", "n", "µs")
                .log(true, false)
                .series("a", [(64.0, 0.3), (128.0, 0.7), (256.0, 1.9)])
                .series("b", [(64.0, 0.5), (256.0, 1.1)]),
        ];
        for p in plots {
            let (first, again) = (p.svg(), p.clone().svg());
            assert!(first.starts_with("<svg ") && first.ends_with("</svg>\n"));
            assert_eq!(first, again);
        }
    }
}
