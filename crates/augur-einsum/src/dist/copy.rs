//! Generated copies between row-major arrays: packing a block for a
//! message, unpacking one, gathering a local block into a piece's buffer.
//!
//! A copy is given per dimension as (destination index, source index)
//! pairs. Pairs that advance together form runs; runs of one length at
//! constant steps form groups, one dyn loop each, so a block-cyclic copy
//! is a loop over tiles rather than code per tile. Trailing dimensions
//! that both arrays hold whole fold into their parent, and the innermost
//! runs are `memcpy`s.

use super::plan::Pairs;
use crate::elem::Elem;
use augur::stage::libc;
use augur::Dyn;

/// Runs of `len` elements at `count` places, `step` apart (elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    pub dst: usize,
    pub src: usize,
    pub len: usize,
    pub count: usize,
    pub dst_step: usize,
    pub src_step: usize,
}

/// One dimension of a copy: its groups, and how far apart (elements)
/// consecutive indices of a run lie in each array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DimCopy {
    pub groups: Vec<Group>,
    pub dst_stride: usize,
    pub src_stride: usize,
}

/// The copy of `pairs` between arrays of `dst_shape` and `src_shape`, as
/// groups, with whole trailing dimensions folded in.
pub(crate) fn describe(pairs: &[Pairs], dst_shape: &[usize], src_shape: &[usize]) -> Vec<DimCopy> {
    let strides = |shape: &[usize]| -> Vec<usize> {
        (0..shape.len())
            .map(|d| shape[d + 1..].iter().product())
            .collect()
    };
    let (ds, ss) = (strides(dst_shape), strides(src_shape));
    let mut dims: Vec<DimCopy> = pairs
        .iter()
        .enumerate()
        .map(|(d, p)| DimCopy {
            groups: groups(p, ds[d], ss[d]),
            dst_stride: ds[d],
            src_stride: ss[d],
        })
        .collect();
    // A last dimension copied whole and in place in both arrays joins its
    // parent: the parent's runs become contiguous spans.
    while dims.len() >= 2 {
        let last = &dims[dims.len() - 1];
        let parent = &dims[dims.len() - 2];
        let whole = matches!(last.groups.as_slice(), [g] if g.count == 1 && g.dst == 0 && g.src == 0
            && g.len == parent.dst_stride && g.len == parent.src_stride);
        if !whole {
            break;
        }
        let n = last.groups[0].len;
        dims.pop();
        let parent = dims.last_mut().expect("two dimensions");
        for g in &mut parent.groups {
            g.len *= n;
        }
        parent.dst_stride = 1;
        parent.src_stride = 1;
    }
    dims
}

/// Runs of consecutive pairs, then groups of runs at constant steps;
/// offsets in elements (`dst_stride`, `src_stride` per index).
fn groups(pairs: &[(usize, usize)], dst_stride: usize, src_stride: usize) -> Vec<Group> {
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    for &(d, s) in pairs {
        match runs.last_mut() {
            Some((d0, s0, len)) if *d0 + *len == d && *s0 + *len == s => *len += 1,
            _ => runs.push((d, s, 1)),
        }
    }
    let mut out: Vec<Group> = Vec::new();
    for (d, s, len) in runs {
        let (d, s) = (d * dst_stride, s * src_stride);
        if let Some(g) = out.last_mut() {
            if g.len == len {
                let (nd, ns) = (g.dst + g.count * g.dst_step, g.src + g.count * g.src_step);
                if g.count == 1 && d > g.dst && s > g.src {
                    g.dst_step = d - g.dst;
                    g.src_step = s - g.src;
                    g.count = 2;
                    continue;
                }
                if g.count > 1 && nd == d && ns == s {
                    g.count += 1;
                    continue;
                }
            }
        }
        out.push(Group {
            dst: d,
            src: s,
            len,
            count: 1,
            dst_step: 0,
            src_step: 0,
        });
    }
    out
}

/// Generates the copy `dims` describes from `src` to `dst`.
#[augur::staged]
pub(crate) fn emit<E: Elem>(dims: &[DimCopy], dst: Dyn<*mut E>, src: Dyn<*mut E>) {
    let size = std::mem::size_of::<E>() as u64;
    if dims.is_empty() {
        // A tensor of no dimensions: one element.
        memcpy(dst, src, size);
        return;
    }
    emit_dim(dims, dst, src, Dyn::lit(0), Dyn::lit(0));
}

#[augur::staged]
fn emit_dim<E: Elem>(
    dims: &[DimCopy],
    dst: Dyn<*mut E>,
    src: Dyn<*mut E>,
    dst_at: Dyn<i64>,
    src_at: Dyn<i64>,
) {
    let (dim, rest) = dims.split_first().expect("at least one dimension");
    let size = std::mem::size_of::<E>() as u64;
    for g in &dim.groups {
        counted(g.count, |t| {
            let d = dst_at + g.dst as i64 + t * g.dst_step as i64;
            let s = src_at + g.src as i64 + t * g.src_step as i64;
            if rest.is_empty() {
                // The innermost dimension is contiguous in both arrays.
                memcpy(dst.offset(d), src.offset(s), g.len as u64 * size);
            } else {
                counted(g.len, |e| {
                    let d = d + e * dim.dst_stride as i64;
                    let s = s + e * dim.src_stride as i64;
                    emit_dim(rest, dst, src, d, s);
                });
            }
        });
    }
}

/// `body(t)` for `t` in `0..n`: a dyn loop, or straight code for one turn.
#[augur::staged]
fn counted(n: usize, mut body: impl FnMut(Dyn<i64>)) {
    if n == 1 {
        body(Dyn::lit(0));
        return;
    }
    let t = Dyn::named("t", 0i64);
    while t.lt(n as i64).is_true() {
        body(t);
        t.set(t + 1);
    }
}

#[augur::staged]
fn memcpy<E: Elem>(dst: Dyn<*mut E>, src: Dyn<*mut E>, bytes: u64) {
    libc::MEMCPY.call(
        dst.cast_ptr::<*mut u8>(),
        src.cast_ptr::<*const u8>(),
        bytes,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_cyclic_row_is_one_group_and_whole_rows_fold() {
        // Tiles of 2 at every 4th index, into a packed buffer.
        let pairs: Pairs = vec![(0, 0), (1, 1), (2, 4), (3, 5), (4, 8), (5, 9)];
        let g = groups(&pairs, 1, 1);
        assert_eq!(
            g,
            vec![Group {
                dst: 0,
                src: 0,
                len: 2,
                count: 3,
                dst_step: 2,
                src_step: 4
            }]
        );
        // Rows 1..3 of a 4 x 3 array, whole: one span of 6 elements.
        let rows: Pairs = vec![(0, 1), (1, 2)];
        let cols: Pairs = (0..3).map(|c| (c, c)).collect();
        let d = describe(&[rows, cols], &[2, 3], &[4, 3]);
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].groups,
            vec![Group {
                dst: 0,
                src: 3,
                len: 6,
                count: 1,
                dst_step: 0,
                src_step: 0
            }]
        );
    }
}
