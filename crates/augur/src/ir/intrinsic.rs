//! Intrinsics: the operations the IR knows by meaning rather than by a
//! C name, as [`Expr::Intrinsic`](super::Expr::Intrinsic) nodes. Each has
//! a signature the verifier checks ([`Intrinsic::check`]), a text form
//! (`@sync_threads()`), and a lowering in every backend: the C writer and
//! the CPU simulation, the CUDA writer, the JIT and the interpreter.
//!
//! | intrinsic | operands | type | meaning |
//! |---|---|---|---|
//! | `@grid_sync()` | | `void` | every thread of the launch meets here |
//! | `@sync_threads()` | | `void` | every thread of the block meets here |
//! | `@shared(offset, bytes)` | `u32`, `u32` constants | `*mut u8` | the address `offset` bytes into the block's shared memory, of which the kernel uses `offset + bytes` at most |
//! | `@atomic_add(p, v)` | `*mut T`, `T` | `T` | adds `v` to `*p` as one step, giving the old value (`T`: `i32`, `u32`, `i64`, `u64`, `f32`, `f64`) |
//! | `@checked(i, len, slice)` | `i64`, `i64`, `i32` | `i64` | `i` if `0 <= i < len`, else the program stops, naming slice number `slice` (-1: a local array) |
//! | `@find_pair(p, n, a, b, d)` | `*const u8` or `*mut u8`, `i64`, `u8`, `u8`, `i64` | `i64` | the least `i >= 0` with `i + d < n`, `p[i] == a` and `p[i + d] == b`, or -1 if there is none (or `d < 0`); it may read any of the `n` bytes at `p` |
//!
//! The barriers appear only as whole statements (`Eval`); the others may
//! be operands. Passes keep every intrinsic where it is, in order, as they
//! keep calls (`@shared` only computes an address, but the kernel's
//! shared memory is laid out in the order its areas are asked for).

use super::{Const, Expr, ExprId, Function, Scalar, Type};

/// An operation of the IR with a meaning of its own (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Intrinsic {
    /// The grid-wide barrier (CUDA: `cooperative_groups::this_grid().sync()`;
    /// the kernel is launched cooperatively).
    GridSync,
    /// The block-wide barrier (CUDA's `__syncthreads()`).
    SyncThreads,
    /// An area of the block's shared memory.
    Shared,
    /// An atomic add that gives the old value.
    AtomicAdd,
    /// A bounds check of checked functions ([`passes::bounds`](crate::passes::bounds)).
    Checked,
    /// The first position of a pair of bytes a fixed distance apart
    /// ([`bytes::find_pair`](crate::bytes::find_pair)): host code only.
    FindPair,
}

/// Shared memory a block may use: CUDA's limit without opting in per kernel.
pub const MAX_SHARED_BYTES: u32 = 48 * 1024;

impl Intrinsic {
    /// Every intrinsic.
    pub const ALL: [Intrinsic; 6] = [
        Intrinsic::GridSync,
        Intrinsic::SyncThreads,
        Intrinsic::Shared,
        Intrinsic::AtomicAdd,
        Intrinsic::Checked,
        Intrinsic::FindPair,
    ];

    /// The name of the text form (`@name(..)`).
    pub fn name(self) -> &'static str {
        match self {
            Intrinsic::GridSync => "grid_sync",
            Intrinsic::SyncThreads => "sync_threads",
            Intrinsic::Shared => "shared",
            Intrinsic::AtomicAdd => "atomic_add",
            Intrinsic::Checked => "checked",
            Intrinsic::FindPair => "find_pair",
        }
    }

    /// The intrinsic whose text name is `name`.
    pub fn from_name(name: &str) -> Option<Intrinsic> {
        Intrinsic::ALL.into_iter().find(|i| i.name() == name)
    }

    /// The name of the C helper a C-like backend prints a node of type
    /// `ty` as (`augur_atomic_add_f32`); each backend defines the helpers
    /// it prints.
    pub fn c_name(self, ty: &Type) -> String {
        match self {
            Intrinsic::AtomicAdd => format!("augur_atomic_add_{}", atomic_suffix(ty)),
            _ => format!("augur_{}", self.name()),
        }
    }

    /// The staging function that emits it, for messages.
    pub fn user_name(self) -> &'static str {
        match self {
            Intrinsic::GridSync => "gpu::grid_sync",
            Intrinsic::SyncThreads => "gpu::sync_threads",
            Intrinsic::Shared => "gpu::shared",
            Intrinsic::AtomicAdd => "gpu::atomic_add",
            Intrinsic::Checked => "the bounds check of a checked function",
            Intrinsic::FindPair => "bytes::find_pair",
        }
    }

    /// True for the two barriers.
    pub fn is_barrier(self) -> bool {
        matches!(self, Intrinsic::GridSync | Intrinsic::SyncThreads)
    }

    /// True for the operations only a GPU block has: the barriers and
    /// shared memory (a loop nest on the CPU has neither).
    pub fn is_block_level(self) -> bool {
        self.is_barrier() || self == Intrinsic::Shared
    }

    /// True for the operations a kernel may run but host code may not.
    pub fn is_device_only(self) -> bool {
        !self.is_host_only()
    }

    /// True for the operations host code may run but a kernel may not: the
    /// bounds check (it stops the host process) and the byte search (the
    /// CUDA writer has no device version).
    pub fn is_host_only(self) -> bool {
        matches!(self, Intrinsic::Checked | Intrinsic::FindPair)
    }

    /// The type a node of it has, given its operands' types (`None` when
    /// they do not fit its signature).
    pub fn result_type(self, operands: &[Type]) -> Option<Type> {
        let s = Type::Scalar;
        match (self, operands) {
            (Intrinsic::GridSync | Intrinsic::SyncThreads, []) => Some(Type::Void),
            (Intrinsic::Shared, [a, b]) if *a == s(Scalar::U32) && *b == s(Scalar::U32) => {
                Some(Type::ptr(s(Scalar::U8)))
            }
            (Intrinsic::AtomicAdd, [Type::Ptr { to, mutable: true }, v])
                if **to == *v && ATOMIC_SCALARS.iter().any(|&a| *v == s(a)) =>
            {
                Some(*v)
            }
            (Intrinsic::Checked, [i, n, k])
                if *i == s(Scalar::I64) && *n == s(Scalar::I64) && *k == s(Scalar::I32) =>
            {
                Some(s(Scalar::I64))
            }
            (Intrinsic::FindPair, [Type::Ptr { to, .. }, n, a, b, d])
                if **to == s(Scalar::U8)
                    && *n == s(Scalar::I64)
                    && *a == s(Scalar::U8)
                    && *b == s(Scalar::U8)
                    && *d == s(Scalar::I64) =>
            {
                Some(s(Scalar::I64))
            }
            _ => None,
        }
    }

    /// Checks node `e` of `f`, an application of this intrinsic to `args`:
    /// its operands and type fit the signature, and `@shared`'s operands
    /// are constants within [`MAX_SHARED_BYTES`].
    pub fn check(self, f: &Function, e: ExprId, args: &[ExprId]) -> Result<(), String> {
        let types: Vec<Type> = args.iter().map(|&a| *f.ty(a)).collect();
        let Some(ty) = self.result_type(&types) else {
            let shown: Vec<String> = types.iter().map(Type::to_string).collect();
            return Err(format!(
                "@{} does not take operands of types ({})",
                self.name(),
                shown.join(", ")
            ));
        };
        if ty != *f.ty(e) {
            return Err(format!(
                "@{} gives {ty}, but its node has type {}",
                self.name(),
                f.ty(e)
            ));
        }
        if self == Intrinsic::Shared {
            let constant = |a: ExprId| match f.exprs[a].kind {
                Expr::Const(Const::Int(k)) => u32::try_from(k).ok(),
                _ => None,
            };
            let (Some(offset), Some(bytes)) = (constant(args[0]), constant(args[1])) else {
                return Err("@shared takes constant operands".into());
            };
            if offset
                .checked_add(bytes)
                .is_none_or(|end| end > MAX_SHARED_BYTES)
            {
                return Err(format!(
                    "@shared({offset}, {bytes}) reaches past {MAX_SHARED_BYTES} bytes"
                ));
            }
        }
        Ok(())
    }
}

/// The element types of `@atomic_add`: what CUDA's `atomicAdd` takes.
pub const ATOMIC_SCALARS: [Scalar; 6] = [
    Scalar::I32,
    Scalar::U32,
    Scalar::I64,
    Scalar::U64,
    Scalar::F32,
    Scalar::F64,
];

/// The suffix of the atomic helper for elements of type `ty` (`f32`).
pub fn atomic_suffix(ty: &Type) -> &'static str {
    match ty {
        Type::Scalar(Scalar::I32) => "i32",
        Type::Scalar(Scalar::U32) => "u32",
        Type::Scalar(Scalar::I64) => "i64",
        Type::Scalar(Scalar::U64) => "u64",
        Type::Scalar(Scalar::F32) => "f32",
        Type::Scalar(Scalar::F64) => "f64",
        _ => "unsupported",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for i in Intrinsic::ALL {
            assert_eq!(Intrinsic::from_name(i.name()), Some(i));
        }
        assert_eq!(Intrinsic::from_name("sync"), None);
    }

    #[test]
    fn signatures() {
        let s = Type::Scalar;
        let f32p = Type::ptr(s(Scalar::F32));
        assert_eq!(
            Intrinsic::AtomicAdd.result_type(&[f32p, s(Scalar::F32)]),
            Some(s(Scalar::F32))
        );
        // The element must match, be one CUDA adds atomically, and be writable.
        assert_eq!(
            Intrinsic::AtomicAdd.result_type(&[f32p, s(Scalar::F64)]),
            None
        );
        let u8p = Type::ptr(s(Scalar::U8));
        assert_eq!(
            Intrinsic::AtomicAdd.result_type(&[u8p, s(Scalar::U8)]),
            None
        );
        let cf32 = Type::cptr(s(Scalar::F32));
        assert_eq!(
            Intrinsic::AtomicAdd.result_type(&[cf32, s(Scalar::F32)]),
            None
        );
        assert_eq!(Intrinsic::SyncThreads.result_type(&[s(Scalar::I32)]), None);
        assert_eq!(
            Intrinsic::AtomicAdd.c_name(&s(Scalar::U64)),
            "augur_atomic_add_u64"
        );
        assert_eq!(Intrinsic::GridSync.c_name(&Type::Void), "augur_grid_sync");
        let (i64_, u8_) = (s(Scalar::I64), s(Scalar::U8));
        let bytes = Type::cptr(u8_);
        assert_eq!(
            Intrinsic::FindPair.result_type(&[bytes, i64_, u8_, u8_, i64_]),
            Some(i64_)
        );
        assert_eq!(
            Intrinsic::FindPair.result_type(&[Type::ptr(u8_), i64_, u8_, u8_, i64_]),
            Some(i64_),
            "a writable buffer is searched as well"
        );
        assert_eq!(
            Intrinsic::FindPair.result_type(&[Type::cptr(i64_), i64_, u8_, u8_, i64_]),
            None
        );
        assert_eq!(
            Intrinsic::FindPair.result_type(&[bytes, i64_, s(Scalar::I32), u8_, i64_]),
            None
        );
    }
}
