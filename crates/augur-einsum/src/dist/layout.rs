//! Where the elements of a distributed tensor live: process grids,
//! layouts, and the arithmetic that maps a global index to its owner and
//! its place in the owner's local array.
//!
//! A layout splits each dimension independently: a dimension is cut into
//! tiles of `tile` consecutive indices, dealt round-robin over `parts`
//! process coordinates (ScaLAPACK's block-cyclic rule; a block layout is
//! the case of one tile per coordinate). Each rank stores the elements it
//! holds as one row-major array of its local extents, indices in
//! increasing order along each dimension, as ScaLAPACK's local arrays do
//! (column-major there).

/// A process grid: `rows × cols` ranks, rank `r` at row `r / cols`, column
/// `r % cols` (row-major, as BLACS's default grid).
///
/// ```
/// use augur_einsum::dist::Grid;
/// assert_eq!(Grid::for_ranks(4), Grid::new(2, 2));
/// assert_eq!(Grid::for_ranks(6), Grid::new(2, 3));
/// assert_eq!(Grid::for_ranks(3), Grid::new(1, 3));
/// assert_eq!(Grid::new(2, 3).coords(4), (1, 1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Grid {
    /// Process rows.
    pub rows: usize,
    /// Process columns.
    pub cols: usize,
}

impl Grid {
    /// A grid of `rows × cols` ranks (both at least 1).
    pub fn new(rows: usize, cols: usize) -> Grid {
        assert!(
            rows >= 1 && cols >= 1,
            "a process grid needs at least one row and column"
        );
        Grid { rows, cols }
    }

    /// The squarest grid of `ranks` ranks: rows the largest divisor of
    /// `ranks` not above its square root.
    pub fn for_ranks(ranks: usize) -> Grid {
        assert!(ranks >= 1, "a process grid needs at least one rank");
        let rows = (1..=ranks)
            .take_while(|r| r * r <= ranks)
            .filter(|r| ranks % r == 0)
            .last()
            .unwrap_or(1);
        Grid::new(rows, ranks / rows)
    }

    /// Ranks in the grid.
    pub fn ranks(self) -> usize {
        self.rows * self.cols
    }

    /// `(row, col)` of `rank`.
    pub fn coords(self, rank: usize) -> (usize, usize) {
        (rank / self.cols, rank % self.cols)
    }

    /// The rank at `(row, col)`.
    pub fn rank(self, row: usize, col: usize) -> usize {
        row * self.cols + col
    }
}

/// How a distributed tensor's elements are spread over the ranks.
///
/// Dimensions a layout does not name are not split. A layout that leaves
/// a grid axis unused (`BlockRows` splits over all ranks, so it uses both;
/// `Replicated` uses none) stores copies: every rank along that axis holds
/// the same elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Every rank holds the whole tensor.
    Replicated,
    /// Dimension 0 in contiguous blocks over all ranks, in rank order.
    BlockRows,
    /// Dimension 1 in contiguous blocks over all ranks, in rank order.
    BlockCols,
    /// Dimension 0 in blocks over the grid's rows, dimension 1 over its
    /// columns (a 2D block layout).
    Block2D,
    /// Tiles of `rows × cols` elements dealt round-robin over the grid in
    /// both dimensions (ScaLAPACK's 2D block-cyclic layout with block sizes
    /// `MB = rows`, `NB = cols`).
    BlockCyclic {
        /// Tile rows (ScaLAPACK's `MB`).
        rows: usize,
        /// Tile columns (ScaLAPACK's `NB`).
        cols: usize,
    },
}

impl Layout {
    /// The layout chosen when none is named: for a matrix on a grid with
    /// more than one row and column, [`Layout::Block2D`] (what SUMMA
    /// needs); otherwise blocks of dimension 0 over all ranks.
    pub fn auto(shape: &[usize], grid: Grid) -> Layout {
        if shape.len() == 2 && grid.rows > 1 && grid.cols > 1 {
            Layout::Block2D
        } else if shape.is_empty() {
            Layout::Replicated
        } else {
            Layout::BlockRows
        }
    }

    /// A short name for tables and messages.
    pub fn name(self) -> String {
        match self {
            Layout::Replicated => "replicated".to_string(),
            Layout::BlockRows => "block rows".to_string(),
            Layout::BlockCols => "block columns".to_string(),
            Layout::Block2D => "2D block".to_string(),
            Layout::BlockCyclic { rows, cols } => format!("block-cyclic {rows}x{cols}"),
        }
    }
}

/// Which coordinate of a rank a dimension is split over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Axis {
    /// Not split: every rank holds the whole extent.
    None,
    /// Over all ranks (coordinate: the rank).
    All,
    /// Over the grid's rows.
    Row,
    /// Over the grid's columns.
    Col,
}

/// One dimension's split: tiles of `tile` indices dealt over `parts`
/// coordinates along `axis`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct DimSplit {
    pub axis: Axis,
    pub parts: usize,
    pub tile: usize,
    pub extent: usize,
}

impl DimSplit {
    fn new(axis: Axis, parts: usize, tile: Option<usize>, extent: usize) -> DimSplit {
        let parts = if axis == Axis::None { 1 } else { parts };
        let tile = tile.unwrap_or_else(|| extent.div_ceil(parts)).max(1);
        DimSplit {
            axis,
            parts,
            tile,
            extent,
        }
    }

    /// The coordinate that holds global index `g`.
    pub fn owner(&self, g: usize) -> usize {
        (g / self.tile) % self.parts
    }

    /// Where `g` lies in its holder's local array.
    pub fn local(&self, g: usize) -> usize {
        (g / (self.tile * self.parts)) * self.tile + g % self.tile
    }

    /// The global index at local position `l` of coordinate `coord`.
    pub fn global(&self, l: usize, coord: usize) -> usize {
        ((l / self.tile) * self.parts + coord) * self.tile + l % self.tile
    }

    /// How many indices coordinate `coord` holds (ScaLAPACK's `numroc`).
    pub fn local_extent(&self, coord: usize) -> usize {
        let full = self.extent / self.tile;
        let mut n = (full / self.parts) * self.tile;
        let extra = full % self.parts;
        if coord < extra {
            n += self.tile;
        } else if coord == extra {
            n += self.extent % self.tile;
        }
        n
    }
}

/// A layout applied to one tensor on one grid: every dimension's split.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Split {
    pub layout: Layout,
    pub grid: Grid,
    pub dims: Vec<DimSplit>,
}

impl Split {
    /// `layout` on `shape` over `grid`, or why it does not apply.
    pub fn new(layout: Layout, shape: &[usize], grid: Grid) -> Result<Split, String> {
        let p = grid.ranks();
        let axes: Vec<(Axis, usize, Option<usize>)> = match layout {
            Layout::Replicated => vec![],
            Layout::BlockRows => vec![(Axis::All, p, None)],
            Layout::BlockCols => vec![(Axis::None, 1, None), (Axis::All, p, None)],
            Layout::Block2D => vec![(Axis::Row, grid.rows, None), (Axis::Col, grid.cols, None)],
            Layout::BlockCyclic { rows, cols } => {
                if rows == 0 || cols == 0 {
                    return Err(format!("{} has an empty tile", layout.name()));
                }
                vec![
                    (Axis::Row, grid.rows, Some(rows)),
                    (Axis::Col, grid.cols, Some(cols)),
                ]
            }
        };
        let named = axes.iter().filter(|a| a.0 != Axis::None).count();
        let needed = axes.len();
        if shape.len() < needed {
            return Err(format!(
                "the {} layout splits {needed} dimensions, the tensor has {} ({named} split)",
                layout.name(),
                shape.len()
            ));
        }
        let dims = shape
            .iter()
            .enumerate()
            .map(|(d, &n)| match axes.get(d) {
                Some(&(axis, parts, tile)) => DimSplit::new(axis, parts, tile, n),
                None => DimSplit::new(Axis::None, 1, None, n),
            })
            .collect();
        Ok(Split { layout, grid, dims })
    }

    /// `rank`'s coordinate along `axis`.
    pub fn coord(&self, rank: usize, axis: Axis) -> usize {
        let (row, col) = self.grid.coords(rank);
        match axis {
            Axis::None => 0,
            Axis::All => rank,
            Axis::Row => row,
            Axis::Col => col,
        }
    }

    /// The local extents `rank` stores.
    pub fn local_shape(&self, rank: usize) -> Vec<usize> {
        self.dims
            .iter()
            .map(|d| d.local_extent(self.coord(rank, d.axis)))
            .collect()
    }

    /// True when `rank` holds the element at `g`.
    pub fn holds(&self, rank: usize, g: &[usize]) -> bool {
        self.dims
            .iter()
            .zip(g)
            .all(|(d, &x)| d.owner(x) == self.coord(rank, d.axis))
    }

    /// The rank that sends the element whose per-dimension owner
    /// coordinates are `coords` to `reader`: the holder that agrees with
    /// `reader` on every grid axis no dimension is split over (so a copy
    /// along a process row comes from the reader's own column).
    pub fn source(&self, reader: usize, coords: &[usize]) -> usize {
        let (mut row, mut col) = self.grid.coords(reader);
        for (d, &c) in self.dims.iter().zip(coords) {
            match d.axis {
                Axis::None => {}
                Axis::All => return c,
                Axis::Row => row = c,
                Axis::Col => col = c,
            }
        }
        self.grid.rank(row, col)
    }
}

/// The global indices of a row-major tensor of `shape` at flat position
/// `flat`.
pub(crate) fn unflatten(shape: &[usize], mut flat: usize) -> Vec<usize> {
    let mut g = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        g[d] = flat % shape[d];
        flat /= shape[d];
    }
    g
}

/// Flat position of `g` in a row-major tensor of `shape`.
pub(crate) fn flatten(shape: &[usize], g: &[usize]) -> usize {
    shape.iter().zip(g).fold(0, |acc, (&n, &x)| acc * n + x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_extents_add_up_and_local_positions_are_a_bijection() {
        for extent in 0..23 {
            for parts in 1..5 {
                for tile in [None, Some(1), Some(2), Some(3), Some(7)] {
                    let d = DimSplit::new(Axis::All, parts, tile, extent);
                    let total: usize = (0..parts).map(|c| d.local_extent(c)).sum();
                    assert_eq!(total, extent, "{d:?}");
                    let mut seen = vec![vec![false; extent]; parts];
                    for g in 0..extent {
                        let (c, l) = (d.owner(g), d.local(g));
                        assert!(l < d.local_extent(c), "{d:?} g={g}");
                        assert!(!seen[c][l]);
                        seen[c][l] = true;
                        assert_eq!(d.global(l, c), g);
                    }
                }
            }
        }
    }

    #[test]
    fn every_element_has_one_holder_in_a_2d_layout_and_its_source_holds_it() {
        let grid = Grid::new(2, 3);
        for layout in [
            Layout::Block2D,
            Layout::BlockRows,
            Layout::BlockCols,
            Layout::BlockCyclic { rows: 2, cols: 1 },
            Layout::Replicated,
        ] {
            let shape = [7, 5];
            let s = Split::new(layout, &shape, grid).unwrap();
            for f in 0..35 {
                let g = unflatten(&shape, f);
                let holders = (0..6).filter(|&r| s.holds(r, &g)).count();
                let want = if layout == Layout::Replicated { 6 } else { 1 };
                assert_eq!(holders, want, "{layout:?} {g:?}");
                let coords: Vec<usize> = s.dims.iter().zip(&g).map(|(d, &x)| d.owner(x)).collect();
                for reader in 0..6 {
                    assert!(s.holds(s.source(reader, &coords), &g));
                }
            }
        }
    }
}
