//! How results are reported: tables (terminal, CSV, JSON, markdown) and
//! SVG plots.

mod axis;
pub mod plot;
pub mod table;

pub use plot::Plot;
pub use table::{Cell, Table};
